#!/usr/bin/env bash
# Runs the Catch2 suite and ends with the line "N passed, N failed, N skipped"
# (test cases). A test that cannot run here (no Chromium, no MPI build, no
# python3…) prints "attn-test-skipped<TAB>NAME<TAB>REASON" (tests/support.h
# ATTN_SKIP); Catch2 v2 counts it as passed, so it is moved from passed to
# skipped here and listed with what would enable it. A test that ran without
# some ISA path this CPU lacks prints "attn-test-partial<TAB>NAME<TAB>REASON"
# and is listed apart, still counted. Exit status: the suite's.
#
# ATTN_TEST_JOBS=N (N > 1) runs one process per test source file, N at once:
# much of the suite waits on the attn processes and servers it starts (the
# sanitizer pass on 2 cores: 191 s, against 288 s as one process; the numbers
# are in docs/results/reliability.md). Each file's output is shown
# whole when it ends; a process that dies (a crash, a sanitizer's abort) counts
# as a failed test case and is named. Arguments that change what Catch2 writes
# or a test spec with a comma (Catch2 v2 has no grouping to AND a file's tag
# with an OR) run the suite as one process.
set -uo pipefail
binary=$1; shift
jobs=${ATTN_TEST_JOBS:-1}
log=$(mktemp)
parts=$(mktemp -d)
trap 'rm -rf "$log" "$parts"' EXIT

# The counts of one Catch2 run's summary line, added to passed and failed.
passed=0; failed=0
count_summary() {
  local summary
  summary=$(grep -E '^(All tests passed|test cases:)' "$1" | tail -n 1)
  if [[ $summary =~ All\ tests\ passed.*in\ ([0-9]+)\ test\ case ]]; then
    passed=$((passed + BASH_REMATCH[1]))
  elif [[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ passed\ \|\ *([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[2])); failed=$((failed + BASH_REMATCH[3]))
  elif [[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ failed ]]; then
    failed=$((failed + BASH_REMATCH[2]))
  elif [[ $summary =~ test\ cases:\ *([0-9]+)\ \|\ *([0-9]+)\ passed ]]; then
    passed=$((passed + BASH_REMATCH[2]))  # Catch2's form when a passing test case asserted nothing
  fi
}

parallel=$([ "$jobs" -gt 1 ] && echo 1 || echo 0)
for arg in "$@"; do
  case $arg in
    *,* | -o | --out | -r | --reporter | -l | --list* | -t | -h | -\? | --help | -f | --input-file | -c | --section) parallel=0 ;;
  esac
done

files=()
if [ "$parallel" -eq 1 ]; then
  # One entry per test source file name (Catch2's -# tags; files of the same
  # name in two folders share one), those with most test cases first so that
  # the long ones do not start last.
  mapfile -t files < <("$binary" -# --list-tags "$@" | sed -nE 's/^ *([0-9]+) +(\[#[^]]+\])$/\1 \2/p' |
                        sort -k1,1nr -k2 | cut -d' ' -f2)
fi

status=0
if [ "${#files[@]}" -eq 0 ]; then
  "$binary" "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  count_summary "$log"
  [ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
else
  # Idle OpenMP threads spin as attn's own do (src/core/threads.cpp), not for
  # libgomp's default 300,000 rounds on cores another process needs.
  export GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}
  for i in "${!files[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    (
      "$binary" -# "$@" "${files[$i]}" > "$parts/$i.log" 2>&1
      echo $? > "$parts/$i.status"
      flock "$parts" cat "$parts/$i.log"
    ) &
  done
  wait
  for i in "${!files[@]}"; do
    part_status=$(cat "$parts/$i.status")
    before=$failed
    count_summary "$parts/$i.log"
    cat "$parts/$i.log" >> "$log"
    if [ "$part_status" -ne 0 ]; then
      status=$part_status
      if [ "$failed" -eq "$before" ]; then
        failed=$((failed + 1))
        echo "$(basename "$binary") ${files[$i]} ended with status $part_status before its summary: see its output above"
      fi
    fi
  done
fi

# The test names and reasons reported with one status, one per line (sorted, unique).
status_lines() { grep -P "^attn-test-$1\t" "$log" | cut -f2- | sort -u; }
# list HEADING LINES: the heading, then "  NAME: REASON" per line.
list() { echo "$1"; printf '%s\n' "$2" | sed 's/^/  /; s/\t/: /'; }
skips=$(status_lines skipped)
skipped=0
if [ -n "$skips" ]; then
  skipped=$(printf '%s\n' "$skips" | cut -f1 | sort -u | wc -l)
  passed=$((passed > skipped ? passed - skipped : 0))
  list "skipped (not counted as passed):" "$skips"
fi
partial=$(status_lines partial)
[ -z "$partial" ] || list "ran in part (counted; what this machine could not cover):" "$partial"
echo "$passed passed, $failed failed, $skipped skipped"
exit "$status"
