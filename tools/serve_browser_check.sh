#!/usr/bin/env bash
# Does the page of `attn serve` draw maps in a real browser?
#   tools/serve_browser_check.sh URL MODEL_NAME...
# Loads URL/?s=<sentence>&models=<names> in headless Chromium and reads the DOM
# after the page's script ran. Exits 0 when <body data-state="drawn"> and each
# named model's panel (section[data-model=NAME]) holds an svg.map with rect
# cells; otherwise prints one line saying why and exits 1 (2: bad usage).
# SENTENCE (environment) overrides the sentence; CHROMIUM the browser.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 URL MODEL_NAME..." >&2
  exit 2
fi
url=${1%/}
shift
sentence=${SENTENCE:-"Ein kleiner Hund läuft über die Wiese."}
chromium=${CHROMIUM:-chromium}

# Percent-encoding of each byte outside [A-Za-z0-9._~-].
urlencode() {
  local LC_ALL=C s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

names=""
for m in "$@"; do names+="${names:+,}$(urlencode "$m")"; done
page="$url/?s=$(urlencode "$sentence")&models=$names"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Virtual time stands still while the API requests are in flight, so the
# budget counts only the page's own work; timeout bounds a server that hangs.
# The DOM goes to a file and is read by awk: bash's ${dom#*…} patterns are
# quadratic in the length, and two models' maps make a DOM of a megabyte.
dom="$profile/dom.html"
timeout 300 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars \
  --user-data-dir="$profile" --virtual-time-budget=10000 --window-size=1600,1400 --dump-dom "$page" >"$dom" 2>/dev/null
status=$?
if [ $status -ne 0 ] || [ ! -s "$dom" ]; then
  echo "chromium returned no page for $page (exit status $status; is the server up?)"
  exit 1
fi

# The whole DOM is one awk record (RS is a byte that HTML text does not hold).
state=$(awk 'BEGIN { RS = "\001" } {
  i = index($0, "<body"); if (!i) exit
  tag = substr($0, i); tag = substr(tag, 1, index(tag, ">"))
  if (match(tag, /data-state="[a-z]*"/)) print substr(tag, RSTART + 12, RLENGTH - 13)
}' "$dom")
if [ "$state" != "drawn" ]; then
  # The page's message, tags dropped.
  reason=$(awk 'BEGIN { RS = "\001" } {
    i = index($0, "id=\"status\""); if (!i) exit
    s = substr($0, i); s = substr(s, index(s, ">") + 1); s = substr(s, 1, index(s, "</div>") - 1)
    gsub(/<[^>]*>/, " ", s); gsub(/  +/, " ", s); sub(/^ /, "", s); print s
  }' "$dom")
  echo "page state is \"${state:-none}\", not \"drawn\"${reason:+: $reason}"
  exit 1
fi

for m in "$@"; do
  esc=$(sed -e 's/&/\&amp;/g' -e 's/"/\&quot;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<<"$m")
  # The panel runs from its data-model attribute to the next panel's.
  why=$(awk -v key="data-model=\"$esc\"" 'BEGIN { RS = "\001" } {
    i = index($0, key); if (!i) { print "no panel"; exit }
    panel = substr($0, i + length(key)); j = index(panel, "data-model="); if (j) panel = substr(panel, 1, j - 1)
    if (!index(panel, "<svg class=\"map")) print "no svg.map in its panel"
    else if (!index(panel, "<rect class=\"c\"") && !index(panel, "<rect class=\"d\"")) print "no cells in its maps"
  }' "$dom")
  if [ -n "$why" ]; then
    echo "model $m: $why"
    exit 1
  fi
done
exit 0
