#!/usr/bin/env bash
# Multi30k as attn's quick start reads it: upstream's data/task1/raw folder
# (https://github.com/multi30k/dataset: train.de.gz, val.de.gz,
# test_2016_flickr.de.gz, ... and the .en of each) decompressed into OUT_DIR
# under the names train.{de,en}, valid.{de,en}, test2016.{de,en}. Other files
# in RAW_DIR (the 2017/2018 test sets, other languages) are left alone.
#   tools/prepare_multi30k.sh RAW_DIR OUT_DIR
set -euo pipefail
usage="usage: tools/prepare_multi30k.sh RAW_DIR OUT_DIR (RAW_DIR: Multi30k's data/task1/raw)"
[ $# -eq 2 ] || { echo "prepare_multi30k: $usage" >&2; exit 2; }
raw=$1 out=$2
[ -d "$raw" ] || { echo "prepare_multi30k: $raw is not a folder; $usage" >&2; exit 2; }
# upstream name → attn's name
names=("train:train" "val:valid" "test_2016_flickr:test2016")
# Every input is checked before anything is written.
for pair in "${names[@]}"; do
  for lang in de en; do
    file="$raw/${pair%%:*}.$lang.gz"
    [ -f "$file" ] || { echo "prepare_multi30k: $file is missing; download data/task1/raw from https://github.com/multi30k/dataset" >&2; exit 2; }
  done
done
mkdir -p "$out"
for pair in "${names[@]}"; do
  for lang in de en; do
    target="$out/${pair##*:}.$lang"
    # Written under a temporary name first: an interrupted run leaves no half file under the real name.
    gzip -dc "$raw/${pair%%:*}.$lang.gz" >"$target.part" || { rm -f "$target.part"; echo "prepare_multi30k: $raw/${pair%%:*}.$lang.gz: damaged gzip data; download it again" >&2; exit 2; }
    mv "$target.part" "$target"
  done
done
echo "prepare_multi30k: $(wc -l <"$out/train.de") training, $(wc -l <"$out/valid.de") validation and $(wc -l <"$out/test2016.de") test pairs in $out"
