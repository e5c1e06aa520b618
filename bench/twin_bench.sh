#!/usr/bin/env bash
# attn against its PyTorch twin (bench/twin), side by side in one run, one
# table per architecture: the reference preset
# (d 256, 3+3 layers, 4 heads, FFN 1024, joint BPE 8,000), Multi30k de→en.
#
#   bench/twin_bench.sh [--json] DATA_DIR [ARCHS...]      (default archs: transformer muse convsan2d fastdisa)
#
# Training: `attn train --seed 1 --max-tokens 4096 --threads T --log-every 1`
# for BENCH_STEPS updates, then `twin_dump batches` writes the batches that run
# trained on (attn's BPE and batcher) and the parameters it started from, and
# the twin trains on exactly those (bench/twin/bench_twin.py) with PyTorch's
# fused loss, F.cross_entropy(label_smoothing=eps, ignore_index=pad). Rows:
# attn fp32, twin, and (BENCH_BF16=1) attn --precision bf16 and the twin under
# torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's own low precision.
# Target tokens/s per update, median after BENCH_WARMUP updates; peak resident
# memory of each process (/usr/bin/time); the share of the FMA peak
# (bench_gemm --peak-only, measured at the start of this run) counted on the
# model's matrix products (bench/twin/bench_report.py).
# Decoding test2016: both sides decode one model (attn train for
# BENCH_DECODE_UPDATES updates, trained once and kept in runs/bench/models/),
# the same BPE-encoded sources in the same order and batches as `attn
# translate` (bench/bench_decode.cpp), greedy (the arg-max search on both
# sides) and beam 5, batch 64 (the first BENCH_SENTENCES) and batch 1 (the
# first BENCH_SENTENCES_B1). Two twin rows: "twin" keeps finished sentences
# in the batch (the plain PyTorch search), "twin, finished dropped" removes
# them from the decoder state as attn does (--drop-finished): the gap between
# them is search bookkeeping, not kernels.
# The twin gets its best chance: OPENBLAS_CORETYPE=SkylakeX (Haswell on AVX2
# machines) and OPENBLAS_NUM_THREADS=T in its environment only,
# torch.set_num_threads(T), inference_mode, cached incremental decoding.
# The output and results.json name the CPU (/proc/cpuinfo: model name, cpu
# family, model) and the FMA peak measured in this run.
#
# Sizes (environment; defaults are the full benchmark):
#   BENCH_STEPS=60 BENCH_WARMUP=10 BENCH_ROUNDS=3 BENCH_SENTENCES=1000 BENCH_SENTENCES_B1=100
#   BENCH_DECODE_UPDATES=300 BENCH_THREADS=2 BENCH_PARTS="train decode" BENCH_OUT=runs/bench/<date>
#   BENCH_TWIN=1 (0: attn's side only, as without PyTorch)  BENCH_BF16=1 (0: no bf16 training rows)
#   BUILD=build (whose attn is measured)  BENCH_MAKE=1 (0: use BUILD's binaries as they are, no make)
# Rounds alternate the sides (attn, twin, attn bf16, twin bf16, attn, twin, …) and
# pool them: every figure is the median over all rounds' samples (training: every
# update after the warm-up of each round; decoding: one run per round), and the
# tables show the range of the per-round medians beside it.
# Results: BENCH_OUT/results.json (JSON rows; --json prints them instead of the tables).
# Resuming: the full run takes hours (the twin trains at a sixth of attn's speed). Rerun the same command
# with the same BENCH_OUT and it goes on where it stopped: each finished step (one side, one arch, one
# round) leaves BENCH_OUT/.done/<step> and is skipped; a step that was cut is run again from its start.
# It refuses to resume on another CPU or commit (the rounds would not be comparable) and appends this
# start's FMA peak to peak.jsonl (the report takes the median of those measured).
set -euo pipefail

json=0
if [ "${1:-}" = --json ]; then json=1; shift; fi
[ $# -ge 1 ] || { echo "usage: bench/twin_bench.sh [--json] DATA_DIR [ARCHS...]" >&2; exit 2; }
data=$(cd "$1" 2>/dev/null && pwd) || { echo "bench: $1: no such directory" >&2; exit 2; }
shift
cd "$(dirname "$0")/.."
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(transformer muse convsan2d fastdisa)
for f in train.de train.en valid.de valid.en test2016.de; do
  [ -f "$data/$f" ] || { echo "bench: $data/$f not found (Multi30k de-en with train, valid and test2016)" >&2; exit 2; }
done

steps=${BENCH_STEPS:-60}
warmup=${BENCH_WARMUP:-10}
rounds=${BENCH_ROUNDS:-3}
sentences=${BENCH_SENTENCES:-1000}
sentences_b1=${BENCH_SENTENCES_B1:-100}
decode_updates=${BENCH_DECODE_UPDATES:-300}
threads=${BENCH_THREADS:-2}
parts=${BENCH_PARTS:-train decode}
bf16=${BENCH_BF16:-1}
build=${BUILD:-build}
out=${BENCH_OUT:-runs/bench/$(date -u +%Y%m%d-%H%M%S)}
python=/usr/bin/python3
log() { echo "bench: $*" >&2; }

# BENCH_MAKE=0: measure the binaries already in BUILD as they are (no make).
[ "${BENCH_MAKE:-1}" = 0 ] ||
  make -s BUILD="$build" "$build/attn" "$build/twin_dump" "$build/bench_decode" "$build/bench_gemm" >&2
attn=$build/attn

twin=${BENCH_TWIN:-1}
if [ "$twin" = 1 ] && ! $python -c 'import torch, numpy' 2>/dev/null; then
  twin=0
  log "PyTorch is not installed for $python (bash tools/ensure-deps.sh twin): attn's side only"
fi
# The twin's OpenBLAS kernel: Debian's falls back to SSE3 on this CPU unless told (bench/twin/README.md).
core=
if grep -qw avx512f /proc/cpuinfo; then core=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then core=Haswell; fi
twin_env=(env ${core:+OPENBLAS_CORETYPE=$core} OPENBLAS_NUM_THREADS="$threads")
# The CPU, named: /proc/cpuinfo's model name, family and model number, and its relevant ISA flags.
cpuinfo() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | xargs || true; }
cpu_name=$(cpuinfo 'model name')
cpu_family=$(cpuinfo 'cpu family')
cpu_model=$(cpuinfo model)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'fma|avx2|avx512f|avx512_bf16|avx512_vnni|amx_bf16|amx_tile' | xargs || true)

mkdir -p "$out/.done"
# The code measured: the last commit that changed what is built or run here (a commit of docs alone
# does not stop a resume), marked when those files have uncommitted changes.
code_paths=(src include bench tools Makefile)
commit=$(git log -1 --format=%h -- "${code_paths[@]}" 2>/dev/null || true)
[ -n "$commit" ] || commit=unknown
[ -z "$(git status --porcelain --untracked-files=no -- "${code_paths[@]}" 2>/dev/null)" ] ||
  commit="$commit (with uncommitted changes)"
if [ -f "$out/meta.json" ]; then
  # Resuming: the same CPU, commit and sizes, or the pooled rounds would mix machines or code.
  $python - "$out/meta.json" "$cpu_name" "$cpu_family" "$cpu_model" "$commit" "${archs[*]}" "$steps" "$rounds" \
      "$sentences" "$sentences_b1" "$threads" "$bf16" "$twin" <<'PY' || exit 2
import json, sys, time
m = json.load(open(sys.argv[1]))
now = dict(zip(["cpu_model_name", "cpu_family", "cpu_model", "commit", "archs", "steps", "rounds",
                "sentences", "sentences_b1", "threads", "bf16", "twin"], sys.argv[2:]))
now["archs"] = now["archs"].split()
for k in ("steps", "rounds", "sentences", "sentences_b1", "threads"):
    now[k] = int(now[k])
for k in ("bf16", "twin"):
    now[k] = now[k] == "1"
diff = [f"{k} {m.get(k)!r} then, {v!r} now" for k, v in now.items() if m.get(k) != v]
if diff:
    print(f"bench: {sys.argv[1]} belongs to another run ({'; '.join(diff)}); use a new BENCH_OUT", file=sys.stderr)
    sys.exit(1)
m.setdefault("resumed", []).append(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
  log "resuming $out ($(ls "$out/.done" | wc -l) steps done earlier)"
else
$python - "$out/meta.json" <<PY
import json, sys
json.dump({"commit": "$commit", "date": "$(date -u '+%Y-%m-%d %H:%M UTC')",
           "cpu": "$cpu_name (family $cpu_family, model $cpu_model), $(nproc) CPUs",
           "cpu_model_name": "$cpu_name", "cpu_family": "$cpu_family", "cpu_model": "$cpu_model",
           "cpu_flags": "$cpu_flags".split(), "nproc": $(nproc), "bf16": bool($bf16),
           "twin_env": "${twin_env[*]:1}", "twin_loss": "F.cross_entropy(label_smoothing, ignore_index=pad)",
           "data": "$data", "test": "test2016", "archs": "${archs[*]}".split(), "threads": $threads,
           "steps": $steps, "warmup": $warmup, "rounds": $rounds, "sentences": $sentences,
           "sentences_b1": $sentences_b1, "decode_updates": $decode_updates, "twin": bool($twin),
           "max_len_rule": "2·src+10", "load_average": open("/proc/loadavg").read().split()[:3]},
          open(sys.argv[1], "w"), indent=1)
PY
fi
log "results in $out"
log "CPU: $cpu_name (family $cpu_family, model $cpu_model; $cpu_flags)"
"$build/bench_gemm" --peak-only --json --threads "1,$threads" > "$out/peak.now.jsonl"
log "FMA peak measured now: $($python -c 'import json, sys
print(", ".join("%.0f GFLOP/s on %d thread(s)" % (r["fma_peak_gflops"], r["threads"]) for r in map(json.loads, open(sys.argv[1])) if r))' "$out/peak.now.jsonl")"
cat "$out/peak.now.jsonl" >> "$out/peak.jsonl" && rm "$out/peak.now.jsonl"

train_args=(--train "$data/train" --valid "$data/valid" --src de --tgt en --seed 1 --threads "$threads"
            --max-tokens 4096 --valid-every 1000000000 --quiet)

# once STEP COMMAND...: run COMMAND unless an earlier start finished STEP (see "Resuming" above).
once() {
  local mark=$out/.done/$1; shift
  if [ -e "$mark" ]; then return 0; fi
  "$@"
  touch "$mark"
}

attn_train() {  # ARCH ROUND
  local dir=$out/$1 r=$2
  log "$1: attn train, $steps updates (round $r)"
  rm -rf "$dir/attn-train.r$r" "$dir/attn-train.r$r.jsonl"
  /usr/bin/time -f %M -o "$dir/attn-train.r$r.rss" "$attn" train "${train_args[@]}" --arch "$1" \
    --max-updates "$steps" --log-every 1 --log-json "$dir/attn-train.r$r.jsonl" --save-dir "$dir/attn-train.r$r"
  # Round 1's last checkpoint gives dump_batches its BPE and config; no other is kept.
  find "$dir/attn-train.r$r" -name '*.attn' ! -path "$dir/attn-train.r1/last.attn" -delete
}

dump_batches() {  # ARCH: the batches attn trained on and the parameters it started from, for the twin
  local dir=$out/$1 trained=$out/$1/attn-train.r1/last.attn
  # The checkpoint only lends its BPE and config (the parameters come from the seed). Round 1's is
  # gone when an earlier start finished this arch's training: then one update makes another.
  if [ ! -f "$trained" ]; then
    rm -rf "$dir/batches-run"
    "$attn" train "${train_args[@]}" --arch "$1" --max-updates 1 --save-dir "$dir/batches-run"
    trained=$dir/batches-run/last.attn
  fi
  "$build/twin_dump" batches "$trained" "$dir/batches.json" --seed 1 --max-tokens 4096 \
    --count "$steps" --train-src "$data/train.de" --train-tgt "$data/train.en" --init-out "$dir/init.attn" >&2
  rm -rf "$dir/batches-run"
}

twin_train() {  # ARCH ROUND [--autocast bf16]
  local dir=$out/$1 r=$2 name=twin-train; shift 2
  [ $# -eq 0 ] || name=twin-train-bf16
  log "$(basename "$dir"): twin train${1:+ under torch.autocast(cpu, bfloat16)}, $steps updates (round $r, OpenBLAS core ${core:-default})"
  /usr/bin/time -f %M -o "$dir/$name.r$r.rss" "${twin_env[@]}" $python bench/twin/bench_twin.py train \
    --batches "$dir/batches.json" --init "$dir/init.attn" --threads "$threads" "$@" --out "$dir/$name.r$r.json" ||
    { [ $# -gt 0 ] && log "$(basename "$dir"): the twin under autocast bf16 failed (round $r); no row"; }
}

attn_train_bf16() {  # ARCH ROUND; a failing bf16 row (an ISA or an op without bf16) is reported, the benchmark goes on
  local dir=$out/$1 r=$2
  log "$1: attn train --precision bf16, $steps updates (round $r)"
  rm -rf "$dir/attn-train-bf16.r$r" "$dir/attn-train-bf16.r$r.jsonl"
  /usr/bin/time -f %M -o "$dir/attn-train-bf16.r$r.rss" "$attn" train "${train_args[@]}" --arch "$1" \
    --precision bf16 --max-updates "$steps" --log-every 1 --log-json "$dir/attn-train-bf16.r$r.jsonl" \
    --save-dir "$dir/attn-train-bf16.r$r" || log "$1: attn --precision bf16 failed (round $r); no attn bf16 row"
  rm -rf "$dir/attn-train-bf16.r$r"
}

decode_model() {  # ARCH: trained once, kept in runs/bench/models/ for later runs ("complete" marks a finished one)
  local model_dir=runs/bench/models/$1.u$decode_updates
  [ -e "$model_dir/complete" ] && "$attn" info "$model_dir/last.attn" >/dev/null 2>&1 && return 0
  log "$1: training the decoding model once ($decode_updates updates, kept in $model_dir)"
  rm -rf "$model_dir"
  "$attn" train "${train_args[@]}" --arch "$1" --max-updates "$decode_updates" --save-dir "$model_dir"
  touch "$model_dir/complete"
}

decode() {  # ARCH BEAM BATCH SENTENCES ROUND: attn, the twin, and the twin without finished sentences
  local dir=$out/$1 model=runs/bench/models/$1.u$decode_updates/last.attn name=b$2.n$3.r$5
  log "$1: decode beam $2, batch $3, $4 sentences (round $5)"
  "$build/bench_decode" "$model" --input "$data/test2016.de" --beam "$2" --batch-size "$3" \
    --sentences "$4" --threads "$threads" --out "$dir/decode/attn.$name.json" >&2
  if [ "$twin" = 1 ]; then
    "${twin_env[@]}" $python bench/twin/bench_twin.py decode --model "$model" --threads "$threads" \
      --attn-result "$dir/decode/attn.$name.json" --out "$dir/decode/twin.$name.json"
    "${twin_env[@]}" $python bench/twin/bench_twin.py decode --model "$model" --threads "$threads" \
      --attn-result "$dir/decode/attn.$name.json" --out "$dir/decode/twin-drop.$name.json" --drop-finished
  fi
}

for arch in "${archs[@]}"; do
  mkdir -p "$out/$arch/decode"
  if [[ " $parts " == *" train "* ]]; then
    for r in $(seq 1 "$rounds"); do
      once "$arch.attn-train.r$r" attn_train "$arch" "$r"
      [ "$twin" = 0 ] || [ "$r" != 1 ] || once "$arch.batches" dump_batches "$arch"
      [ "$twin" = 0 ] || once "$arch.twin-train.r$r" twin_train "$arch" "$r"
      if [ "$bf16" = 1 ]; then
        once "$arch.attn-train-bf16.r$r" attn_train_bf16 "$arch" "$r"
        [ "$twin" = 0 ] || once "$arch.twin-train-bf16.r$r" twin_train "$arch" "$r" --autocast bf16
      fi
    done
    rm -f "$out/$arch/attn-train.r1/last.attn"
  fi
  if [[ " $parts " == *" decode "* ]]; then
    decode_model "$arch"
    for config in "1 64 $sentences" "5 64 $sentences" "1 1 $sentences_b1" "5 1 $sentences_b1"; do
      read -r beam bs n <<<"$config"
      for r in $(seq 1 "$rounds"); do
        once "$arch.decode.b$beam.n$bs.r$r" decode "$arch" "$beam" "$bs" "$n" "$r"
      done
    done
  fi
done

$python bench/twin/bench_report.py "$out" $([ "$json" = 1 ] && echo --json)
