#!/usr/bin/env bash
# Quality run on Multi30k German→English: train the default preset with
# --threads 2 for 20 minutes, translate and score test2016 with beam 5, then
# resume the same run up to 60 minutes and score again. Each time two models
# are scored: best.attn (best validation BLEU) and avg5.attn, the average of
# the last 5 epoch checkpoints (attn average --last 5, fairseq's practice).
# Everything goes where attn report reads it (the run layout, docs/report.md):
# hyp/test2016.<model>.txt and score/test2016.<model>.json, with <model> best
# and avg5 after the last budget, best-<M>min and avg5-<M>min after an
# earlier budget M (avg5-<M>min.attn is kept; best.attn moves on).
#   experiments/quality_m30k.sh [MULTI30K_DIR] [RUN_DIR] [ARCH] [EXTRA TRAIN FLAGS...]
# Environment: QUALITY_MINUTES, the budgets (default "20 60").
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/multi30k}
run=${2:-runs/m30k}
arch=${3:-transformer}
shift $(( $# > 3 ? 3 : $# )) || true
if [ ! -f "$data/train.de" ]; then
  echo "quality_m30k: $data/train.de not found. Multi30k: https://github.com/multi30k/dataset (data/task1/raw, decompressed)" >&2
  exit 2
fi
make -s attn
mkdir -p "$run/hyp" "$run/score"
budgets=(${QUALITY_MINUTES:-20 60})
last=${budgets[${#budgets[@]}-1]}
score() {  # NAME MODEL_FILE: translate test2016 into hyp/test2016.NAME.txt and score it
  ./attn translate -m "$2" -i "$data/test2016.de" -o "$run/hyp/test2016.$1.txt" --beam 5 --threads 2
  ./attn score --ref "$data/test2016.en" -i "$run/hyp/test2016.$1.txt" --metrics bleu,chrf --format json \
    >"$run/score/test2016.$1.json.tmp"
  mv "$run/score/test2016.$1.json.tmp" "$run/score/test2016.$1.json"
  ./attn score --ref "$data/test2016.en" -i "$run/hyp/test2016.$1.txt" --metrics bleu,chrf --format text
}
for minutes in "${budgets[@]}"; do
  suffix=$([ "$minutes" = "$last" ] || echo "-${minutes}min")
  # A budget already spent (a resumed comparison) is not trained or scored again.
  [ -f "$run/score/test2016.avg5$suffix.json" ] && continue
  ./attn train --train "$data/train" --valid "$data/valid" --src de --tgt en --arch "$arch" \
    --save-dir "$run" --max-time "$minutes" --threads 2 --log-every 50 --keep-last 5 "$@" \
    2> >(tee -a "$run/train.log" >&2)
  ./attn average --last 5 "$run" -o "$run/avg5$suffix.attn"
  echo "== after $minutes minutes of training (best checkpoint), test2016, beam 5"
  score "best$suffix" "$run/best.attn"
  echo "== after $minutes minutes of training (average of the last 5 epoch checkpoints), test2016, beam 5"
  score "avg5$suffix" "$run/avg5$suffix.attn"
done
