#!/usr/bin/env bash
# Minutes of attn training to reach a validation BLEU: Multi30k, FP32 and bf16.
#
#   experiments/time_to_bleu.sh DATA_DIR                 train once per precision, then report
#   experiments/time_to_bleu.sh --report LOG.jsonl ...   report from existing attn train logs only
#
# Each run is `attn train --precision P --valid-every N --log-every N --log-json OUT/P/log.jsonl`
# (the reference preset unless ARGS says otherwise) and stops when every target is reached or at
# MAX_UPDATES. The report (experiments/bleu_minutes.py) prints, per target, the first validation with
# BLEU >= the target: its wall-clock minute and the minute without the validations' own time.
# Resolution: one validation interval. Hours of CPU per run: not for `make test`.
#
# Environment (defaults): TARGETS="35 40" PRECISIONS="fp32 bf16" ARCH=transformer SEED=1 THREADS=2
#   VALID_EVERY=100 MAX_UPDATES=6000 OUT=runs/time_to_bleu/<date> BUILD=build ARGS="" (more attn train flags)
set -euo pipefail
python=/usr/bin/python3
targets=${TARGETS:-35 40}
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck disable=SC2086  # TARGETS: one number per word
report() { $python "$here/bleu_minutes.py" --targets $targets -- "$@"; }

if [ "${1:-}" = --report ]; then
  shift
  [ $# -ge 1 ] || { echo "usage: experiments/time_to_bleu.sh --report LOG.jsonl ..." >&2; exit 2; }
  report "$@"
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: experiments/time_to_bleu.sh DATA_DIR | --report LOG.jsonl ..." >&2; exit 2; }
data=$(cd "$1" 2>/dev/null && pwd) || { echo "time_to_bleu: $1: no such directory" >&2; exit 2; }
cd "$(dirname "$0")/.."
for f in train.de train.en valid.de valid.en; do
  [ -f "$data/$f" ] || { echo "time_to_bleu: $data/$f not found (Multi30k de-en)" >&2; exit 2; }
done
build=${BUILD:-build}
attn=$build/attn
every=${VALID_EVERY:-100}
out=${OUT:-runs/time_to_bleu/$(date -u +%Y%m%d-%H%M%S)}
highest=$(printf '%s\n' $targets | sort -g | tail -1)
make -s BUILD="$build" "$attn" >&2
mkdir -p "$out"
logs=()
for precision in ${PRECISIONS:-fp32 bf16}; do
  dir=$out/$precision
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "time_to_bleu: $precision: attn train → $dir (until valid BLEU $highest or ${MAX_UPDATES:-6000} updates)" >&2
  # shellcheck disable=SC2086  # ARGS: extra flags, word-split on purpose
  "$attn" train --train "$data/train" --valid "$data/valid" --src de --tgt en --arch "${ARCH:-transformer}" \
    --seed "${SEED:-1}" --threads "${THREADS:-2}" --max-tokens 4096 --precision "$precision" \
    --valid-every "$every" --log-every "$every" --max-updates "${MAX_UPDATES:-6000}" \
    --log-json "$dir/log.jsonl" --save-dir "$dir" --quiet ${ARGS:-} > "$dir/train.log" 2>&1 &
  pid=$!
  # Stop the run (this script's own child) once the highest target is reached.
  while kill -0 "$pid" 2>/dev/null; do
    sleep 20
    if [ -f "$dir/log.jsonl" ] && $python - "$dir/log.jsonl" "$highest" <<'PY'
import json, sys
hit = any(r.get("split") == "valid" and (r.get("bleu") or 0) >= float(sys.argv[2])
          for r in map(json.loads, filter(str.strip, open(sys.argv[1]))))
sys.exit(0 if hit else 1)
PY
    then
      echo "time_to_bleu: $precision reached BLEU $highest; stopping the run" >&2
      kill -INT "$pid" 2>/dev/null || true
    fi
  done
  wait "$pid" || true
  logs+=("$dir/log.jsonl")
done
report "${logs[@]}" | tee "$out/report.txt"
