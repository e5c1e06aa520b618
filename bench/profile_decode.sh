#!/usr/bin/env bash
# Where beam search spends its time, per compute type, and what that allows int8.
#
#   bench/profile_decode.sh MODEL SOURCES [SENTENCES]       (default: the first 300 lines of SOURCES)
#
# For each of TYPES (default "fp32 int8"): `perf record --call-graph dwarf` of
# `attn translate --compute-type T --beam 5 --batch-size 64 --threads 1`, then the share of all
# samples spent under (perf's "children") each part of a decoding step:
#   weight products  attn::kernels::weight_product (or gemm_int8 or sgemm_fp32_packed, which it
#                    tail-calls): every x·Wᵀ of a linear layer (int8: quantizing the activations, packing, vpdpbusd); the only
#                    products --compute-type int8 changes
#   output softmax   log_softmax_forward: the vocabulary's log-softmax (in place, after the output layer)
#   best candidates  the beam's top-2K over K·V scores
#   cache reorder    Seq2Seq::select: the decoder caches gathered to the surviving beams
#   encoder          encode_batch (its own weight products included)
#   page zeroing     the kernel's clear_page*: fresh memory faulted in
# One thread, so every OpenMP region runs on the thread whose stack perf unwinds (with two, a
# worker's samples have no caller). The bound: if int8 made the weight products free and left the
# rest as FP32 has it, int8 ÷ FP32 ≤ 1 / (1 − FP32's weight-product share).
# Needs perf (linux-perf) and a build with symbols (the default `make`). Environment: BUILD=build
# TYPES="fp32 int8" FREQ=499 OUT=runs/profile/<date>.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/profile_decode.sh MODEL SOURCES [SENTENCES]" >&2; exit 2; }
model=$1 sources=$2 sentences=${3:-300}
[ -f "$model" ] || { echo "profile_decode: $model: no such model file" >&2; exit 2; }
[ -f "$sources" ] || { echo "profile_decode: $sources: no such file" >&2; exit 2; }
command -v perf >/dev/null || { echo "profile_decode: perf not found (apt-get install linux-perf)" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=${BUILD:-build}
out=${OUT:-runs/profile/$(date -u +%Y%m%d-%H%M%S)}
make -s BUILD="$build" "$build/attn" >&2
mkdir -p "$out"
head -n "$sentences" "$sources" > "$out/sources.txt"
: > "$out/ms.txt"

for type in ${TYPES:-fp32 int8}; do
  start=$(date +%s%N)
  perf record -q -F "${FREQ:-499}" --call-graph dwarf,32768 -o "$out/$type.data" -- \
    "$build/attn" translate -m "$model" -i "$out/sources.txt" -o "$out/$type.hyp" --compute-type "$type" \
    --beam 5 --batch-size 64 --threads 1 2> "$out/$type.log"
  echo "$type $(( ($(date +%s%N) - start) / 1000000 ))" >> "$out/ms.txt"
  perf report -i "$out/$type.data" --children --sort symbol --stdio -g none 2>/dev/null > "$out/$type.report"
done

/usr/bin/python3 - "$out" ${TYPES:-fp32 int8} <<'PY'
import re, sys

out, types = sys.argv[1], sys.argv[2:]
# perf prints bare names (no arguments), some twice (inlined copies); under int8, weight_product
# tail-calls gemm_int8 and often drops out of the stack: each part takes its largest match.
parts = [("weight products", r"(attn::kernels::weight_product|::gemm_int8|::gemm_bf16_packed|::sgemm_fp32_packed)$"),
         ("output softmax", r"log_softmax_forward$"),
         ("best candidates", r"best_candidates$"),
         ("cache reorder", r"Seq2Seq::select$"),
         ("encoder", r"encode_batch$"),
         ("page zeroing", r"^clear_page")]
seconds = {t: int(ms) / 1000 for t, ms in (line.split() for line in open(f"{out}/ms.txt"))}


def shares(report):
    """Children share (percent of all samples) of the largest symbol matching each part."""
    found = {}
    for line in open(report):
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[[.k]\]\s+(.+?)(?:\s{2,}|\s*$)", line)
        if not m:
            continue
        for name, pattern in parts:
            if re.search(pattern, m.group(3)):
                found[name] = max(found.get(name, 0.0), float(m.group(1)))
    return found


table = {t: shares(f"{out}/{t}.report") for t in types}
print(f"decoding {out}/sources.txt, beam 5, batch 64, 1 thread; share of all samples (perf, children)")
print(f"{'part':20} " + " ".join(f"{t:>9}" for t in types))
for name, _ in parts:
    print(f"{name:20} " + " ".join(f"{table[t].get(name, 0.0):>8.1f}%" for t in types))
print(f"{'seconds (perf on)':20} " + " ".join(f"{seconds[t]:>9.2f}" for t in types))
if "fp32" in table:
    w = table["fp32"].get("weight products", 0.0) / 100
    print(f"bound: with free weight products and FP32's rest, ÷ FP32 ≤ 1 / (1 − {w:.3f}) = {1 / (1 - w):.2f}×")
    for t in types:
        if t != "fp32":
            print(f"{t} ÷ fp32 under perf: {float(seconds['fp32']) / seconds[t]:.2f}×")
PY
