#!/usr/bin/env bash
# The C and C++ sources in the style of .clang-format, with clang-format 14.
#   dev/format.sh           reformats them in place
#   dev/format.sh --check   lists each file that differs from its formatted form, with
#                           the start of the diff, and exits 1; silent and 0 when all match
# The files: git's tracked and untracked-but-not-ignored *.cpp, *.h, *.c, less those
# matched by .clang-format-ignore (clang-format 14 does not read that file itself).
# Only clang-format 14 is used: other major versions lay some constructs out
# differently, so the check would fail on code that 14 accepts. Without it, --check
# says it is skipped and exits 0 (make test reports the test as skipped), and the
# in-place mode fails. CLANG_FORMAT=path chooses the binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: dev/format.sh [--check]" >&2; exit 2 ;;
esac

want_major=14
# The first of these that is clang-format $want_major.
find_clang_format() {
  local candidate
  for candidate in "${CLANG_FORMAT:-}" clang-format-$want_major clang-format; do
    if [ -z "$candidate" ] || ! command -v "$candidate" >/dev/null 2>&1; then continue; fi
    if [[ $("$candidate" --version 2>/dev/null) =~ version\ $want_major\. ]]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
if ! clang_format=$(find_clang_format); then
  found=$(command -v "${CLANG_FORMAT:-clang-format}" 2>/dev/null || true)
  if [ -n "$found" ]; then
    why="$found is $("$found" --version 2>/dev/null | grep -Eo 'version [0-9]+' | head -n 1), not $want_major"
  else
    why="clang-format is not installed"
  fi
  if [ "$check" = 1 ]; then
    echo "dev/format.sh: format check skipped: $why (apt-get install clang-format-$want_major)"
    exit 0
  fi
  echo "dev/format.sh: $why (apt-get install clang-format-$want_major)" >&2
  exit 2
fi

# .clang-format-ignore: one path or glob per line from the repository's root
# (* also matches /), # comments.
ignore_patterns=()
if [ -f .clang-format-ignore ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    line=${line%"${line##*[![:space:]]}"}
    [ -n "$line" ] && ignore_patterns+=("$line")
  done < .clang-format-ignore
fi
ignored() {
  local pattern
  for pattern in ${ignore_patterns[@]+"${ignore_patterns[@]}"}; do
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    [[ $1 == $pattern ]] && return 0
  done
  return 1
}

files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r -d '' f; do
    [ -f "$f" ] && ! ignored "$f" && files+=("$f")
  done < <(git ls-files -z --cached --others --exclude-standard -- '*.cpp' '*.h' '*.c' | sort -zu)
else
  # Not a git checkout (an unpacked archive): the source folders.
  while IFS= read -r f; do
    f=${f#./}
    ignored "$f" || files+=("$f")
  done < <(find src include tests bench fuzz -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) 2>/dev/null | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "dev/format.sh: no C or C++ files found under $root" >&2; exit 2; }

if [ "$check" = 0 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" -i --style=file
  exit 0
fi

# One clang-format run over a copy of the files (a run per file would start
# clang-format hundreds of times), then each copy compared with its original.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp .clang-format "$scratch/"
printf '%s\0' "${files[@]}" | xargs -0 cp --parents -t "$scratch"
if ! (cd "$scratch" && printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" -i --style=file); then
  echo "dev/format.sh: clang-format failed (see above)"
  exit 1
fi
differ=0
for f in "${files[@]}"; do
  cmp -s "$f" "$scratch/$f" && continue
  differ=$((differ + 1))
  echo "$f"
  diff -u --label "$f" --label "$f (formatted)" "$f" "$scratch/$f" | sed -n '3,14p' | sed 's/^/    /' || true
done
if [ "$differ" -gt 0 ]; then
  echo "dev/format.sh: $differ file(s) differ from clang-format's output; dev/format.sh reformats them in place"
  exit 1
fi
