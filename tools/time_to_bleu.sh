#!/usr/bin/env bash
# Minutes of attn training to reach a validation BLEU (issue 22): Multi30k, FP32 and bf16.
#
#   tools/time_to_bleu.sh DATA_DIR                 train once per precision, then report
#   tools/time_to_bleu.sh --report LOG.jsonl ...   report from existing attn train logs only
#
# Each run is `attn train --precision P --valid-every N --log-every N --log-json OUT/P/log.jsonl`
# (the reference preset unless ARGS says otherwise) and stops when every target is reached or at
# MAX_UPDATES. The report reads the log's validation records ({"split": "valid", "update",
# "elapsed_s", "bleu"}) and prints, per target, the first validation with BLEU >= the target:
# its wall-clock minute (elapsed_s: the run's clock, validations and checkpoints included) and,
# when a training record was logged at the same update (--log-every dividing --valid-every), the
# minute without the validations (elapsed_s minus the time each validation took). Resolution: one
# validation interval. Hours of CPU per run: not for `make test`.
#
# Environment (defaults): TARGETS="35 40" PRECISIONS="fp32 bf16" ARCH=transformer SEED=1 THREADS=2
#   VALID_EVERY=100 MAX_UPDATES=6000 OUT=runs/time_to_bleu/<date> BUILD=build ARGS="" (more attn train flags)
set -euo pipefail
python=/usr/bin/python3
targets=${TARGETS:-35 40}

report() {
  $python - "$targets" "$@" <<'PY'
import json, sys

targets = [float(t) for t in sys.argv[1].split()]
print(f"{'run':44} {'precision':>9} " + " ".join(f"{'BLEU ' + format(t, 'g'):>22}" for t in targets)
      + f" {'best BLEU':>10} {'at min':>7}")
print(f"{'':44} {'':>9} " + " ".join(f"{'wall min (train min)':>22}" for _ in targets) + f" {'':>10} {'':>7}")
for path in sys.argv[2:]:
    precision, last_train, valid_time, hits, best = "?", {}, 0.0, {}, None
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            split = r.get("split")
            if split == "model":
                precision = str((r.get("train_flags") or {}).get("--precision", precision))
            elif split == "train":
                last_train = r
            elif split == "valid" and r.get("bleu") is not None:
                wall = r["elapsed_s"]
                # The validation's own time, when the update's training record was logged just before it.
                took = wall - last_train["elapsed_s"] if last_train.get("update") == r["update"] else None
                train_s = wall - valid_time - took if took is not None else None
                if took is not None:
                    valid_time += took
                else:
                    valid_time = float("nan")  # unknown from here on
                if best is None or r["bleu"] > best[0]:
                    best = (r["bleu"], wall)
                for t in targets:
                    if t not in hits and r["bleu"] >= t:
                        hits[t] = (wall, train_s, r["update"])
    cells = []
    for t in targets:
        if t in hits:
            wall, train_s, update = hits[t]
            inner = f"{train_s / 60:.1f}" if train_s is not None and train_s == train_s else "—"
            cells.append(f"{wall / 60:.1f} ({inner}) u{update}")
        else:
            cells.append("not reached")
    name = path if len(path) <= 44 else "…" + path[-43:]
    print(f"{name:44} {precision:>9} " + " ".join(f"{c:>22}" for c in cells)
          + f" {format(best[0], '.2f') if best else '—':>10} {format(best[1] / 60, '.1f') if best else '—':>7}")
PY
}

if [ "${1:-}" = --report ]; then
  shift
  [ $# -ge 1 ] || { echo "usage: tools/time_to_bleu.sh --report LOG.jsonl ..." >&2; exit 2; }
  report "$@"
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: tools/time_to_bleu.sh DATA_DIR | --report LOG.jsonl ..." >&2; exit 2; }
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
