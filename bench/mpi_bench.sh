#!/usr/bin/env bash
# Data-parallel training on this machine: the reference preset on
# Multi30k, --update-freq 2 (two batches of --max-tokens 4096 per update) in
# three layouts: 1 rank × 1 thread, 1 rank × 2 threads, 2 ranks × 1 thread
# (make MPI=1's binary under mpirun). Prints the median target tokens/s of
# updates after the warm-up and, for 2 ranks, the time rank 0 waited for the
# gradient all-reduce.
#   bench/mpi_bench.sh [MULTI30K_DIR] [UPDATES]        (defaults: data/multi30k 40)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-data/multi30k}
updates=${2:-40}
warmup=10
[ -f "$data/train.de" ] || { echo "mpi_bench: $data/train.de not found" >&2; exit 2; }
make -s attn build/attn-mpi
out=runs/mpi-bench/$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
flags=(train --train "$data/train" --valid "$data/valid" --src de --tgt en --seed 1 --update-freq 2
       --max-updates "$updates" --log-every 1 --valid-every 100000)

median_tokens_per_s() {  # log.jsonl
  python3 - "$1" "$warmup" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
v = [r["tokens_per_s"] for r in rows if r.get("split") == "train" and r["update"] > int(sys.argv[2])]
print(f"{statistics.median(v):,.0f}" if v else "?")
PY
}

printf '%-22s %14s %s\n' layout "target tok/s" "all-reduce wait"
run() {  # ranks, threads
  local name="$1 rank(s) x $2 thread(s)" dir=$out/r$1-t$2
  if [ "$1" = 1 ]; then
    ./attn "${flags[@]}" --threads "$2" --save-dir "$dir" 2> "$dir.err"
    wait_s="-"
  else
    mpirun --oversubscribe --bind-to none -np "$1" build/attn-mpi "${flags[@]}" --threads "$2" \
      --save-dir "$dir" > "$dir.err" 2>&1
    wait_s=$(grep -o 'waited [0-9.]* s' "$dir.err" | tail -1)
  fi
  printf '%-22s %14s %s\n' "$name" "$(median_tokens_per_s "$dir/log.jsonl")" "$wait_s"
}
run 1 1
run 1 2
run 2 1
echo "logs: $out"
