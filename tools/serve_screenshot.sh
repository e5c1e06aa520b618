#!/usr/bin/env bash
# A PNG of attn serve's page comparing models on one sentence, as headless
# Debian Chromium draws it (the README's picture).
#   tools/serve_screenshot.sh OUT.png NAME=MODEL... (env: SENTENCE, VIEW="component=encoder&layer=0&head=1",
#                                                    WIDTH=1600 HEIGHT=1140 PORT=8125 BUILD=build)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/serve_screenshot.sh OUT.png NAME=MODEL..." >&2; exit 2; }
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
command -v chromium >/dev/null || { echo "serve_screenshot: chromium is not installed (apt-get install chromium)" >&2; exit 2; }
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
profile=$(mktemp -d)
timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars --user-data-dir="$profile" \
  --virtual-time-budget=20000 --window-size="${WIDTH:-1600},${HEIGHT:-1140}" --screenshot="$out" \
  "http://127.0.0.1:$port/?$query#${VIEW:-component=encoder&layer=0&head=1}" 2>/dev/null
rm -rf "$profile"
echo "$out"
