#!/usr/bin/env bash
# attn serve under hostile clients (bench/hostile_load.h) beside 16 ordinary
# ones: the ordinary clients' sentences/s with the hostile ones running ÷
# without, /healthz's p99 (timed every 25 ms on fresh connections) and the
# server's largest RSS; rounds, medians (docs/serve.md, "Hostile clients").
#   tools/serve_hostile_bench.sh MODEL SRC   (env as tools/serve_bench.sh: CLIENTS=16 DURATION=20 ROUNDS=3
#                                             THREADS=2 BEAM=5 BUILD=build SERVE_ARGS=…)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/serve_hostile_bench.sh MODEL SRC" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=${BUILD:-build}
make --no-print-directory "$build/attn" "$build/bench_serve" >/dev/null
grep -m1 "model name" /proc/cpuinfo | sed 's/^.*: /CPU: /'
git log -1 --format='commit %h' 2>/dev/null || true
"$build/bench_serve" --attn "$build/attn" --model "$1" --input "$2" --clients "${CLIENTS:-16}" \
  --seconds "${DURATION:-20}" --rounds "${ROUNDS:-3}" --threads "${THREADS:-2}" --beam "${BEAM:-5}" \
  --serve-args "${SERVE_ARGS:-}" --hostile 1
