#!/usr/bin/env bash
# make demo: train a small Transformer on the synthetic corpus in data/toy for
# about a minute, translate its test set with beam search, score it, and write
# the attention maps of a few sentences as JSON and as a page (attn attend).
# Run it again and it reuses (or resumes) the model in runs/demo.
# The tests run it small and elsewhere: ATTN (the binary), DEMO_DIR (the run),
# DEMO_TRAIN_FLAGS (replaces the model and budget flags).
set -euo pipefail
cd "$(dirname "$0")/.."
data=data/toy
run=${DEMO_DIR:-runs/demo}
attn=${ATTN:-./attn}
train_flags=${DEMO_TRAIN_FLAGS:-"--dim 128 --ffn-dim 512 --heads 4 --layers 2 --dropout 0.1 --vocab-size 1000
  --max-tokens 1000 --lr 2e-3 --warmup 100 --max-time 1 --log-every 50"}
[ -f "$data/train.src" ] || { echo "demo: $data/train.src is missing; regenerate it with: python3 dev/make_toy_corpus.py --out $data" >&2; exit 2; }
mkdir -p "$run"

echo "== train (about 1 minute; resumes from $run/last.attn if present)"
# shellcheck disable=SC2086
"$attn" train --train "$data/train" --valid "$data/valid" --save-dir "$run" $train_flags

echo "== translate $data/test.src (beam 5)"
# The translation and its score go where attn report reads them (the run layout, docs/report.md).
mkdir -p "$run/hyp" "$run/score"
"$attn" translate -m "$run/best.attn" -i "$data/test.src" -o "$run/hyp/test.best.txt" --beam 5
for i in 1 2 3; do
  echo "  src: $(sed -n "${i}p" "$data/test.src")"
  echo "  hyp: $(sed -n "${i}p" "$run/hyp/test.best.txt")"
  echo "  ref: $(sed -n "${i}p" "$data/test.tgt")"
done

echo "== score"
"$attn" score --ref "$data/test.tgt" -i "$run/hyp/test.best.txt" --format json >"$run/score/test.best.json"
"$attn" score --ref "$data/test.tgt" -i "$run/hyp/test.best.txt" --format text

echo "== model"
"$attn" info "$run/best.attn"

echo "== attention maps of the first 5 test sentences (beam 5)"
head -n 5 "$data/test.src" | "$attn" attend -m "$run/best.attn" -i - -o "$run/maps.json" --html "$run/maps.html"
echo "  JSON: $PWD/$run/maps.json (the format: docs/attention-json.md)"
echo "  page: file://$PWD/$run/maps.html (open it in a browser)"

echo "== what to try next"
echo "  translate your own lines:  ./attn translate -m $run/best.attn -i FILE -o FILE.hyp"
echo "  draw the maps of a file:   ./attn attend -m $run/best.attn -i FILE -o maps.json --html maps.html"
echo "  serve it with a page:      ./attn serve -m demo=$run/best.attn   (then open http://127.0.0.1:8080/)"
echo "  the run's curves, scores:  ./attn report $run -o report.html"
echo "  a real corpus (Multi30k):  README.md's quick start; every flag: docs/guide.md, attn COMMAND --help"
