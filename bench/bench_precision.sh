#!/usr/bin/env bash
# Decoding speed and quality by compute type: `attn
# translate --compute-type fp32|bf16|int8` on one model, side by side in one
# run, rounds alternating the types (fp32, bf16, int8, fp32, …) so the
# machine's drift hits all alike; medians of sentences/s, ratios to fp32,
# and BLEU / chrF2 of each type's output against the reference; also the
# rate without loading the model (each round times a run on empty input,
# which loads and converts the model and decodes nothing). Also prints
# the CPU and this CPU's FP32 FMA / bf16 / int8 dot-product ceilings
# (bench/lowp_peak.c), measured in the same run.
#
#   bench/bench_precision.sh MODEL SRC REF [OUT_DIR]
#
# Environment: ROUNDS=3 BEAM=5 THREADS=2 SENTENCES_B1=200 (batch 1 decodes the
# first SENTENCES_B1 lines; batch 64 the whole file) TYPES="fp32 bf16 int8"
# ATTN=./attn. A type may name its decoder count, TYPE/D (translate --decoders
# D; plain TYPE: translate's default, one per thread), e.g. TYPES="fp32/1 fp32
# bf16 int8" also times FP32 as one decoder on every thread; ratios are to "fp32".
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench/bench_precision.sh MODEL SRC REF [OUT_DIR]" >&2; exit 2; }
model=$1 src=$2 ref=$3 out=${4:-runs/bench-precision}
rounds=${ROUNDS:-3} beam=${BEAM:-5} threads=${THREADS:-2} n_b1=${SENTENCES_B1:-200}
types=(${TYPES:-fp32 bf16 int8})
attn=${ATTN:-./attn}
mkdir -p "$out"
head -n "$n_b1" "$src" > "$out/src.b1"
head -n "$n_b1" "$ref" > "$out/ref.b1"

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') (family $(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $4}') model $(grep -m1 '^model\s' /proc/cpuinfo | awk '{print $3}'))"
echo "attn $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $attn; model $model; beam $beam; threads $threads; $rounds rounds"
peak_src=bench/lowp_peak.c
if [ -f "$peak_src" ] && gcc -O2 -march=native "$peak_src" -o "$out/lowp_peak" 2>/dev/null; then
  echo "ceilings (one thread, bench/lowp_peak.c):"
  "$out/lowp_peak" | sed 's/^/  /'
fi

# decode TYPE[/D] BATCH INPUT OUTPUT → seconds on stdout
decode() {
  local start end decoders=()
  [[ $1 == */* ]] && decoders=(--decoders "${1#*/}")
  start=$(date +%s.%N)
  "$attn" translate -m "$model" -i "$3" -o "$4" --beam "$beam" --batch-size "$2" --compute-type "${1%/*}" \
    --threads "$threads" "${decoders[@]}" 2> "$4.err"
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

# hyp TYPE[/D] SUFFIX → the file its translations go to
hyp() { echo "$out/hyp.${1/\//-}.$2"; }

lines_full=$(wc -l < "$src")
: > "$out/empty"
declare -A times decoding loads
for round in $(seq 1 "$rounds"); do
  for type in "${types[@]}"; do
    load=$(decode "$type" 1 "$out/empty" "$(hyp "$type" empty)")
    loads[$type]="${loads[$type]:-} $load"
    for batch in 64 1; do
      if [ "$batch" = 64 ]; then input=$src n=$lines_full; else input=$out/src.b1 n=$n_b1; fi
      s=$(decode "$type" "$batch" "$input" "$(hyp "$type" "b$batch")")
      times[$type.$batch]="${times[$type.$batch]:-} $(echo "$n / $s" | bc -l)"
      decoding[$type.$batch]="${decoding[$type.$batch]:-} $(echo "$n / ($s - $load)" | bc -l)"
      printf 'round %d %-5s batch %-3s %8.2f sentences/s (load %.2f s)\n' "$round" "$type" "$batch" \
        "$(echo "$n / $s" | bc -l)" "$load"
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo
printf '%-6s %-6s %14s %9s %8s %8s %14s %9s %7s\n' type batch "sentences/s" "vs fp32" BLEU chrF2 \
  "without load" "vs fp32" "load s"
for batch in 64 1; do
  base=$(echo "${times[fp32.$batch]}" | median)
  base_decoding=$(echo "${decoding[fp32.$batch]}" | median)
  for type in "${types[@]}"; do
    m=$(echo "${times[$type.$batch]}" | median)
    d=$(echo "${decoding[$type.$batch]}" | median)
    l=$(echo "${loads[$type]}" | median)
    if [ "$batch" = 64 ]; then r=$ref; else r=$out/ref.b1; fi
    scores=$("$attn" score --ref "$r" -i "$(hyp "$type" "b$batch")" |
      python3 -c 'import json,sys; print(" ".join("%.2f" % m["score"] for m in json.load(sys.stdin)))')
    printf '%-6s %-6s %14.2f %9.2f %8s %8s %14.2f %9.2f %7.2f\n' "$type" "$batch" "$m" "$(echo "$m / $base" | bc -l)" \
      $scores "$d" "$(echo "$d / $base_decoding" | bc -l)" "$l"
  done
done
