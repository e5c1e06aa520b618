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
dom=$(timeout 300 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --virtual-time-budget=10000 --window-size=1600,1400 --dump-dom "$page" 2>/dev/null)
status=$?
if [ $status -ne 0 ] || [ -z "$dom" ]; then
  echo "chromium returned no page for $page (exit status $status; is the server up?)"
  exit 1
fi

body=${dom#*<body}
body=${body%%>*}
state=$(sed -n 's/.*data-state="\([a-z]*\)".*/\1/p' <<<"$body")
if [ "$state" != "drawn" ]; then
  reason=""
  if [[ $dom == *'id="status"'* ]]; then  # the page's message, tags dropped
    reason=${dom#*'id="status"'}
    reason=${reason#*>}
    reason=${reason%%</div>*}
    reason=$(sed -e 's/<[^>]*>/ /g' -e 's/  */ /g' -e 's/^ //' <<<"$reason")
  fi
  echo "page state is \"${state:-none}\", not \"drawn\"${reason:+: $reason}"
  exit 1
fi

for m in "$@"; do
  esc=$(sed -e 's/&/\&amp;/g' -e 's/"/\&quot;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<<"$m")
  if [[ $dom != *"data-model=\"$esc\""* ]]; then
    echo "no panel for model $m"
    exit 1
  fi
  panel=${dom#*"data-model=\"$esc\""}
  panel=${panel%%data-model=*}  # up to the next panel
  if [[ $panel != *'<svg class="map'* ]]; then
    echo "the panel of model $m has no svg.map"
    exit 1
  fi
  if [[ $panel != *'<rect class="c"'* && $panel != *'<rect class="d"'* ]]; then
    echo "the maps of model $m have no cells"
    exit 1
  fi
done
exit 0
