#!/usr/bin/env bash
# Where a training update spends its time, per precision: what bounds bf16 ÷ FP32.
#
#   bench/profile_train.sh MULTI30K_DIR [ARCH] [UPDATES]        (defaults: transformer, 30 updates)
#
# For each of PRECISIONS (default "fp32 bf16"): `perf record` of `attn train --arch ARCH --precision P
# --threads 1` (the reference preset, seed 1, no validation) for UPDATES updates, then each sample's own
# function (perf "self") put in one kind of work:
#   products      the matrix products and their packing (gemm, bf16 and int8 tiles, pack_*)
#   layernorm     LayerNorm forward and backward
#   softmax       attention's softmax and the loss's log-softmax, forward and backward
#   dropout       dropout masks and their application
#   activation    ReLU/GELU forward and backward
#   optimizer     Adam and the gradient's norm and scaling
#   elementwise   residual adds, bias adds, row sums, axpy, scaling
#   memory        memset/memcpy and the kernel's page faults
#   other         the rest (the mechanisms' own loops, batching, logging)
# One thread, so the shares are of one core's time; seconds = share × the run's wall time under perf.
# The bound printed: if bf16 made the products free and left the rest as FP32 has it,
# bf16 ÷ FP32 ≤ 1 / (1 − FP32's products share).
# Needs perf (linux-perf) and a build with symbols (the default `make`). Environment: BUILD=build
# PRECISIONS="fp32 bf16" FREQ=499 OUT=runs/profile/train-<date>.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/profile_train.sh MULTI30K_DIR [ARCH] [UPDATES]" >&2; exit 2; }
data=$1 arch=${2:-transformer} updates=${3:-30}
[ -f "$data/train.de" ] || { echo "profile_train: $data/train.de not found" >&2; exit 2; }
command -v perf >/dev/null || { echo "profile_train: perf not found (apt-get install linux-perf)" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=${BUILD:-build}
out=${OUT:-runs/profile/train-$(date -u +%Y%m%d-%H%M%S)}
make -s BUILD="$build" "$build/attn" >&2
mkdir -p "$out"
: > "$out/ms.txt"

for precision in ${PRECISIONS:-fp32 bf16}; do
  rm -rf "$out/$precision.run"
  start=$(date +%s%N)
  perf record -q -F "${FREQ:-499}" -o "$out/$precision.data" -- \
    "$build/attn" train --train "$data/train" --valid "$data/valid" --src de --tgt en --arch "$arch" \
    --precision "$precision" --seed 1 --threads 1 --max-updates "$updates" --valid-every 1000000 \
    --save-dir "$out/$precision.run" --quiet 2> "$out/$precision.log"
  echo "$precision $(( ($(date +%s%N) - start) / 1000000 ))" >> "$out/ms.txt"
  perf report -i "$out/$precision.data" --no-children --sort symbol --stdio 2>/dev/null > "$out/$precision.report"
done

/usr/bin/python3 - "$out" "$arch" "$updates" ${PRECISIONS:-fp32 bf16} <<'PY'
import re, sys

out, arch, updates, precisions = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
# First match wins, so the specific kinds come before the broad ones.
kinds = [("layernorm", r"layernorm"),
         ("softmax", r"softmax"),
         ("dropout", r"dropout"),
         ("activation", r"activation|relu|gelu"),
         ("optimizer", r"adam|grad_norm|clip_"),
         ("products", r"gemm|_tile<|pack_|int8_tile|bf16_tile|run_region|Product|dot_block"),
         ("elementwise", r"add_row|sum_rows|axpy|scale|add_into|residual|elementwise|add_bias|::add\b"),
         ("memory", r"memset|memmove|memcpy|clear_page|page_fault|pvm_irq|_copy_to_iter"),
         ("other", r".")]
seconds = {p: int(ms) / 1000 for p, ms in (line.split() for line in open(f"{out}/ms.txt"))}


def shares(report):
    found = {name: 0.0 for name, _ in kinds}
    for line in open(report):
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$", line)
        if not m:
            continue
        for name, pattern in kinds:
            if re.search(pattern, m.group(2)):
                found[name] += float(m.group(1))
                break
    return found


table = {p: shares(f"{out}/{p}.report") for p in precisions}
print(f"training {arch}, {updates} updates, 1 thread; share of all samples (perf, self) and seconds")
print(f"{'kind':14} " + " ".join(f"{p:>17}" for p in precisions))
for name, _ in kinds:
    print(f"{name:14} " + " ".join(f"{table[p][name]:>7.1f}% {table[p][name] * seconds[p] / 100:>7.2f} s"
                                   for p in precisions))
print(f"{'wall (perf on)':14} " + " ".join(f"{seconds[p]:>15.2f} s" for p in precisions))
if "fp32" in table:
    w = table["fp32"]["products"] / 100
    print(f"bound: with free products and FP32's rest, ÷ FP32 ≤ 1 / (1 − {w:.3f}) = {1 / (1 - w):.2f}×")
    for p in precisions:
        if p != "fp32":
            print(f"{p} ÷ fp32 under perf: {seconds['fp32'] / seconds[p]:.2f}×")
PY
