#!/usr/bin/env bash
# Training speed of every architecture on real batches: each arch trains the
# reference preset (d 256, 3+3 layers, 4 heads, FFN 1024, BPE 8,000) for a
# fixed number of updates on the same corpus with the same seed and threads,
# and the median target tokens/s of its progress windows after warm-up is
# printed next to the Transformer's. Archs run interleaved (A B C … A B C …)
# so that drift of a shared machine hits them alike.
#   bench/arch_speed.sh [MULTI30K_DIR] [UPDATES] [ROUNDS] [ARCHS...]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/multi30k}
updates=${2:-60}
rounds=${3:-2}
shift $(( $# > 3 ? 3 : $# )) || true
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(transformer muse muse-simple muse-separate convsan convsan2d fastdisa lightconv dynamicconv)
[ -f "$data/train.de" ] || { echo "arch_speed: $data/train.de not found" >&2; exit 2; }
make -s attn
out=runs/arch_speed
mkdir -p "$out"
precisions=(${PRECISIONS:-fp32})
for round in $(seq 1 "$rounds"); do
  for arch in "${archs[@]}"; do
    for precision in "${precisions[@]}"; do
      name=$arch
      [ "$precision" = fp32 ] || name=$arch@$precision
      dir="$out/$name.$round"
      rm -rf "$dir"
      /usr/bin/time -f "%M" -o "$dir.rss" ./attn train --train "$data/train" --valid "$data/valid" --src de --tgt en \
        --arch "$arch" --precision "$precision" --save-dir "$dir" --max-updates "$updates" --valid-every 1000000 \
        --threads 2 --quiet --log-json "$dir.jsonl" --log-every 10 || true
    done
  done
done
rows=()
for arch in "${archs[@]}"; do
  for precision in "${precisions[@]}"; do
    if [ "$precision" = fp32 ]; then rows+=("$arch"); else rows+=("$arch@$precision"); fi
  done
done
/usr/bin/python3 - "$out" "$updates" "${rows[@]}" <<'PY'
import json, statistics, sys, glob
out, updates, archs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def rates(arch):
    r = []
    for path in sorted(glob.glob(f"{out}/{arch}.*.jsonl")):
        for line in open(path):
            j = json.loads(line)
            if j.get("split") == "train" and j.get("update", 0) > updates // 4 and "tokens_per_s" in j:
                r.append(j["tokens_per_s"])
    return r
def rss(arch):
    vals = [int(open(p).read().split()[-1]) for p in glob.glob(f"{out}/{arch}.*.rss")]
    return max(vals) / 1e6 if vals else float("nan")
base = statistics.median(rates("transformer")) if rates("transformer") else float("nan")
def median(a):
    r = rates(a)
    return statistics.median(r) if r else float("nan")
print(f"{'arch':18} {'median tok/s':>12} {'÷ transformer':>14} {'÷ its fp32':>11} {'windows':>8} {'peak RSS GB':>12}")
for a in archs:
    m = median(a)
    own = m / median(a.split("@")[0])
    print(f"{a:18} {m:12.0f} {m / base:14.2f} {own:11.2f} {len(rates(a)):8d} {rss(a):12.2f}")
PY
