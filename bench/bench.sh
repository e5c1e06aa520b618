#!/usr/bin/env bash
# make bench: the benchmarks in named parts, each built (make) and run in turn.
#   bench/bench.sh [PARTS]     PARTS: comma-separated part names; "default" (make bench) runs
#                              the default parts in order, "all" every part, "list" or "help" lists them.
# Each part prints its own results and its ratios against its yardstick (OpenBLAS, attn's own
# global attention, the PyTorch twin, the Transformer, attn translate, FP32, CTranslate2).
# Environment: BUILD=build  M30K=data/multi30k  BENCH_OUT=runs/bench/make-bench
#   MODEL (precision, profile: the model file to decode with)  MAKE=make  SANITIZE=0
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
m30k=${M30K:-data/multi30k}
make_cmd=${MAKE:-make}
serve_model=runs/bench/models/muse.u300/last.attn  # trained by the twin part's decoding half

# name|in the default set|what it measures (one line for `list`)
parts=(
  "gemm|yes|SGEMM and the FMA peak against OpenBLAS (bench/bench_gemm.cpp)"
  "band|yes|ConvSAN's banded attention kernel against global attention as T grows (bench/bench_band.cpp)"
  "disa|yes|Fast-DiSA's factorised form against multi-head attention and the direct form (bench/bench_disa.cpp)"
  "length|yes|each arch's training step time and memory against input length (bench/bench_length.cpp; plot: bench/plot_length.py)"
  "twin|yes|attn against its PyTorch twin on Multi30k, training and decoding (bench/twin_bench.sh; needs M30K)"
  "arch|yes|training speed and peak memory of every arch against the Transformer's (bench/arch_speed.sh; needs M30K)"
  "serve|yes|attn serve under load against attn translate (bench/serve_bench.sh; needs M30K and the twin part's model)"
  "step|no|one training step of the reference model: ms per step, target tokens/s (bench/bench_step.cpp)"
  "precision|no|decoding speed and BLEU by compute type against FP32 (bench/bench_precision.sh; needs MODEL and M30K)"
  "mpi|no|data-parallel training: ranks × threads layouts (bench/mpi_bench.sh; needs M30K and make MPI=1)"
  "profile|no|where beam search spends its time, per compute type (bench/profile_decode.sh; needs MODEL, M30K and perf)"
  "profile-train|no|where a training update spends its time, FP32 and bf16 (bench/profile_train.sh; needs M30K and perf)"
  "ctranslate2|no|attn translate against CTranslate2 on the exported Transformer (bench/ctranslate2_bench.sh; needs MODEL, M30K and bench/ctranslate2_build.sh's build)"
)

list_parts() {
  echo "bench parts (make bench PARTS=a,b; * = in the default set, make bench):"
  local row name default what
  for row in "${parts[@]}"; do
    IFS='|' read -r name default what <<<"$row"
    printf '  %-13s %s %s\n' "$name" "$([ "$default" = yes ] && echo '*' || echo ' ')" "$what"
  done
}

known() {
  local row
  for row in "${parts[@]}"; do [ "${row%%|*}" = "$1" ] && return 0; done
  return 1
}

build_targets() { "$make_cmd" --no-print-directory SANITIZE="${SANITIZE:-0}" "${@/#/$build/}"; }

need_m30k() {
  [ -f "$m30k/train.de" ] && return 0
  echo "bench: $1 skipped: $m30k/train.de not found (make bench M30K=DIR)"
  return 1
}

need_model() {
  [ -n "${MODEL:-}" ] && [ -f "$MODEL" ] && return 0
  echo "bench: $1 skipped: give the model file to decode with (make bench PARTS=$1 MODEL=FILE)"
  return 1
}

run_part() {
  echo "== bench: $1"
  case $1 in
    gemm | band | disa | length | step)
      build_targets "bench_$1"
      "$build/bench_$1"
      ;;
    twin)
      need_m30k twin || return 0
      BUILD=$build BENCH_OUT=${BENCH_OUT:-runs/bench/make-bench} bash bench/twin_bench.sh "$m30k"
      ;;
    arch)
      need_m30k arch || return 0
      bash bench/arch_speed.sh "$m30k"
      ;;
    serve)
      need_m30k serve || return 0
      build_targets attn bench_serve
      BUILD=$build bash bench/serve_bench.sh "$serve_model" "$m30k/test2016.de"
      ;;
    precision)
      need_m30k precision && need_model precision || return 0
      bash bench/bench_precision.sh "$MODEL" "$m30k/test2016.de" "$m30k/test2016.en"
      ;;
    mpi)
      need_m30k mpi || return 0
      bash bench/mpi_bench.sh "$m30k"
      ;;
    profile)
      need_m30k profile && need_model profile || return 0
      bash bench/profile_decode.sh "$MODEL" "$m30k/test2016.de"
      ;;
    profile-train)
      need_m30k profile-train || return 0
      bash bench/profile_train.sh "$m30k"
      ;;
    ctranslate2)
      need_m30k ctranslate2 && need_model ctranslate2 || return 0
      build_targets attn
      ATTN=$build/attn bash bench/ctranslate2_bench.sh "$MODEL" "$m30k/test2016.de" "$m30k/test2016.en"
      ;;
  esac
}

request=${1:-default}
case $request in
  list | help)
    list_parts
    exit 0
    ;;
  default | all)
    selected=()
    for row in "${parts[@]}"; do
      IFS='|' read -r name default _ <<<"$row"
      [ "$request" = all ] || [ "$default" = yes ] && selected+=("$name")
    done
    ;;
  *)
    IFS=',' read -r -a selected <<<"$request"
    for name in "${selected[@]}"; do
      known "$name" || { echo "bench: no part named '$name' in PARTS=$request; make bench PARTS=list lists them" >&2; exit 2; }
    done
    ;;
esac
for name in "${selected[@]}"; do run_part "$name"; done
