#!/usr/bin/env bash
# A PNG of one of attn's pages as headless Debian Chromium draws it, for docs/
# and the README.
#   dev/screenshot.sh page PAGE.html OUT.png [WIDTH] [HEIGHT]
#       an offline page (attn report's, attn attend's); defaults 1400 × 2200
#   dev/screenshot.sh serve OUT.png NAME=MODEL...
#       attn serve's page comparing models on one sentence (the README's picture); env: SENTENCE,
#       VIEW="component=encoder&layer=0&head=1", WIDTH=1600 HEIGHT=1140 PORT=8125 BUILD=build
set -euo pipefail
usage="usage: dev/screenshot.sh page PAGE.html OUT.png [WIDTH] [HEIGHT] | serve OUT.png NAME=MODEL..."
[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
command -v chromium >/dev/null || { echo "screenshot: chromium is not installed (apt-get install chromium)" >&2; exit 2; }

# shot URL OUT.png WIDTH HEIGHT VIRTUAL_MS: Chromium's picture of URL once the page's
# script had VIRTUAL_MS of virtual time (which stands still while requests are in flight).
shot() {
  local profile
  profile=$(mktemp -d)
  timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars --user-data-dir="$profile" \
    --virtual-time-budget="$5" --window-size="$3,$4" --screenshot="$2" "$1" 2>/dev/null
  rm -rf "$profile"
  echo "$2"
}

case $1 in
  page)
    shot "file://$(realpath "$2")" "$(realpath -m "$3")" "${4:-1400}" "${5:-2200}" 2000
    ;;
  serve)
    out=$(realpath -m "$2")
    shift 2
    cd "$(dirname "$0")/.."
    port=${PORT:-8125}
    names=()
    serve_args=()
    for spec in "$@"; do names+=("${spec%%=*}"); serve_args+=(-m "$spec"); done
    log=$(mktemp)
    "${BUILD:-build}/attn" serve "${serve_args[@]}" --port "$port" --threads 2 2>"$log" &
    server=$!
    trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
    for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.2; done
    grep -q "listening on" "$log" || { cat "$log" >&2; exit 1; }
    sentence=${SENTENCE:-Ein kleiner Hund läuft über die Wiese.}
    query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlencode({"s": sys.argv[1], "models": sys.argv[2], "beam": 5}))' \
      "$sentence" "$(IFS=,; echo "${names[*]}")")
    shot "http://127.0.0.1:$port/?$query#${VIEW:-component=encoder&layer=0&head=1}" "$out" "${WIDTH:-1600}" "${HEIGHT:-1140}" 20000
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
