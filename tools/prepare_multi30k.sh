#!/usr/bin/env bash
# Multi30k as attn's quick start reads it: upstream's data/task1/raw folder
# (https://github.com/multi30k/dataset: train.de.gz, val.de.gz,
# test_2016_flickr.de.gz, ... and the .en of each) decompressed into OUT_DIR
# under the names train.{de,en}, valid.{de,en}, test2016.{de,en}. Other files
# in RAW_DIR (the 2017/2018 test sets, other languages) are left alone.
# All six files are written or none: every input is read (whole, sound gzip,
# as many lines in .de as in .en, not empty) before anything is written, and
# a write that fails (a full or read-only disk) removes what this run wrote.
#   tools/prepare_multi30k.sh RAW_DIR OUT_DIR
set -euo pipefail
usage="usage: tools/prepare_multi30k.sh RAW_DIR OUT_DIR (RAW_DIR: Multi30k's data/task1/raw)"
fail() { echo "prepare_multi30k: $*" >&2; exit 2; }
# "gzip: stdout: No space left on device" → "No space left on device"
reason() { local text; text=$(printf '%s\n' "$1" | grep -m1 . || true); echo "${text##*: }"; }
[ $# -eq 2 ] || fail "$usage"
raw=$1 out=$2
[ -d "$raw" ] || fail "$raw is not a folder; $usage"
[ ! -e "$out" ] || [ -d "$out" ] || fail "$out exists and is not a folder; give another OUT_DIR"
# upstream name → attn's name
names=("train:train" "val:valid" "test_2016_flickr:test2016")
# Every input is checked before anything is written.
for pair in "${names[@]}"; do
  for lang in de en; do
    file="$raw/${pair%%:*}.$lang.gz"
    [ -f "$file" ] || fail "$file is missing; download data/task1/raw from https://github.com/multi30k/dataset"
  done
done
declare -A lines
for pair in "${names[@]}"; do
  base="$raw/${pair%%:*}"
  for lang in de en; do
    lines[$lang]=$(gzip -dc "$base.$lang.gz" 2>/dev/null | awk 'END { print NR }') ||
      fail "$base.$lang.gz: damaged gzip data; download it again"
    [ "${lines[$lang]}" -gt 0 ] || fail "$base.$lang.gz holds no lines; download it again"
  done
  [ "${lines[de]}" -eq "${lines[en]}" ] ||
    fail "$base.de.gz has ${lines[de]} lines but $base.en.gz has ${lines[en]}; the two sides must pair line for line; download them again"
done
made_out=0
if [ ! -d "$out" ]; then
  err=$(mkdir -p "$out" 2>&1) || fail "cannot create $out: $(reason "$err")"
  made_out=1
fi
# Written under temporary names first, renamed when all six are whole: an
# interrupted or failed run leaves no half file, and no half set, under the real names.
parts=()
undo() {
  rm -f "${parts[@]}"
  [ "$made_out" -eq 0 ] || rmdir "$out" 2>/dev/null || true
}
trap 'undo; exit 130' INT TERM HUP
# Past a file size limit (ulimit -f) a write then fails with EFBIG, which gzip
# says, instead of the signal ending gzip without a word.
trap '' XFSZ
for pair in "${names[@]}"; do
  for lang in de en; do
    target="$out/${pair##*:}.$lang"
    parts+=("$target.part")
    if ! err=$(gzip -dc "$raw/${pair%%:*}.$lang.gz" 2>&1 >"$target.part"); then
      undo
      fail "cannot write $target: $(reason "${err:-the write failed}")"
    fi
  done
done
for part in "${parts[@]}"; do mv "$part" "${part%.part}"; done
trap - INT TERM HUP
echo "prepare_multi30k: $(wc -l <"$out/train.de") training, $(wc -l <"$out/valid.de") validation and $(wc -l <"$out/test2016.de") test pairs in $out"
