#!/usr/bin/env bash
# attn serve under load against attn translate on the same sentences (make
# bench runs it): 16 clients sending one sentence per request for 20 s
# against translate's batches of 64, rounds alternating, medians. HOSTILE=1
# adds, per round, the same clients beside every hostile client of
# bench/hostile_load.h: their sentences/s ÷ unloaded, /healthz's p99 and the
# server's largest RSS (docs/serve.md, "Hostile clients").
#   bench/serve_bench.sh MODEL SRC        (env: CLIENTS=16 DURATION=20 ROUNDS=2 THREADS=2 BEAM=5 BUILD=build
#                                          SERVE_ARGS="--decoders 2": more flags for attn serve; HOSTILE=1)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bench/serve_bench.sh MODEL SRC" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=${BUILD:-build}
make --no-print-directory "$build/attn" "$build/bench_serve" >/dev/null
grep -m1 "model name" /proc/cpuinfo | sed 's/^.*: /CPU: /'
git log -1 --format='commit %h' 2>/dev/null || true
"$build/bench_serve" --attn "$build/attn" --model "$1" --input "$2" --clients "${CLIENTS:-16}" \
  --seconds "${DURATION:-20}" --rounds "${ROUNDS:-2}" --threads "${THREADS:-2}" --beam "${BEAM:-5}" \
  --serve-args "${SERVE_ARGS:-}" --hostile "${HOSTILE:-0}"
