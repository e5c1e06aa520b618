#!/usr/bin/env bash
# A PNG of an offline page (attn report's, attn attend's) as headless
# Debian Chromium draws it, for docs/.
#   tools/screenshot.sh PAGE.html OUT.png [WIDTH] [HEIGHT]     (defaults 1400 × 2200)
set -euo pipefail
page=$(realpath "$1")
out=$(realpath -m "$2")
width=${3:-1400}
height=${4:-2200}
command -v chromium >/dev/null || { echo "screenshot: chromium is not installed (apt-get install chromium)" >&2; exit 2; }
timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars \
  --virtual-time-budget=2000 --window-size="$width,$height" --screenshot="$out" "file://$page" 2>/dev/null
echo "$out"
