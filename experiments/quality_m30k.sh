#!/usr/bin/env bash
# Quality run on Multi30k German→English: train the default preset with
# --threads 2 for 20 minutes, translate and score test2016 with beam 5, then
# resume the same run up to 60 minutes and score again. Each time two models
# are scored: best.attn (best validation BLEU) and the average of the last 5
# epoch checkpoints (attn average --last 5, fairseq's practice). The scores go
# to score[.avg5].<M>min.txt as sacreBLEU's text lines and to
# score[.avg5].<M>min.json as its JSON, which attn report reads.
#   experiments/quality_m30k.sh [MULTI30K_DIR] [RUN_DIR] [ARCH] [EXTRA TRAIN FLAGS...]
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
mkdir -p "$run"
score() {  # minutes
  ./attn average --last 5 "$run" -o "$run/avg5.$1min.attn"
  ./attn translate -m "$run/best.attn" -i "$data/test2016.de" -o "$run/test2016.$1min.hyp" --beam 5 --threads 2
  ./attn translate -m "$run/avg5.$1min.attn" -i "$data/test2016.de" -o "$run/test2016.avg5.$1min.hyp" --beam 5 --threads 2
  echo "== after $1 minutes of training (best checkpoint), test2016, beam 5"
  ./attn score --ref "$data/test2016.en" -i "$run/test2016.$1min.hyp" --metrics bleu,chrf --format json \
    > "$run/score.$1min.json"
  ./attn score --ref "$data/test2016.en" -i "$run/test2016.$1min.hyp" --metrics bleu,chrf --format text \
    | tee "$run/score.$1min.txt"
  echo "== after $1 minutes of training (average of the last 5 epoch checkpoints), test2016, beam 5"
  ./attn score --ref "$data/test2016.en" -i "$run/test2016.avg5.$1min.hyp" --metrics bleu,chrf --format json \
    > "$run/score.avg5.$1min.json"
  ./attn score --ref "$data/test2016.en" -i "$run/test2016.avg5.$1min.hyp" --metrics bleu,chrf --format text \
    | tee "$run/score.avg5.$1min.txt"
}
for minutes in ${QUALITY_MINUTES:-20 60}; do
  # A budget already spent (a resumed comparison) is not trained or scored again.
  [ -f "$run/score.avg5.${minutes}min.txt" ] && continue
  /usr/bin/time -v ./attn train --train "$data/train" --valid "$data/valid" --src de --tgt en --arch "$arch" \
    --save-dir "$run" --max-time "$minutes" --threads 2 --log-json "$run/log.jsonl" --log-every 50 --keep-last 5 "$@" \
    2> >(tee -a "$run/train.log" >&2)
  score "$minutes"
done
grep -h "Maximum resident" "$run/train.log" | tail -2
