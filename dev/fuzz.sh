#!/usr/bin/env bash
# The libFuzzer targets in fuzz/ (corpus reader, BPE encoder, model-file
# loader, attention-JSON input side): builds them with clang (coverage, ASan,
# UBSan) into build-fuzz/ and runs each for SECONDS, as many at once as there
# are cores, from the committed seeds in fuzz/seeds/<target>/ plus what
# earlier runs kept in build-fuzz/corpus/<target>/. A crash, leak or timeout
# leaves its input in build-fuzz/artifacts/ and makes the script fail.
#   dev/fuzz.sh [SECONDS] [TARGETS...]        (make fuzz FUZZ_SECONDS=600)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(corpus bpe model_file attention_json)
bash tools/ensure-deps.sh fuzz
make -s FUZZ=1 -j"$(nproc)" "${targets[@]/#/build-fuzz/fuzz_}"
mkdir -p build-fuzz/artifacts

run_target() {  # target
  mkdir -p "build-fuzz/corpus/$1"
  # -close_fd_mask=2: the targets' own stderr (attn's warnings) is closed; libFuzzer reports on a copy.
  build-fuzz/fuzz_"$1" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 -close_fd_mask=2 \
    -artifact_prefix="build-fuzz/artifacts/$1-" "build-fuzz/corpus/$1" "fuzz/seeds/$1" > "build-fuzz/$1.log" 2>&1
}
pids=() failed=0
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do sleep 1; done
  run_target "$t" & pids+=($!)
done
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then verdict="no crash"; else verdict="FAILED (see build-fuzz/$t.log)"; failed=1; fi
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "build-fuzz/$t.log" | tail -1 || true)
  printf '%-15s %5ss  %10s runs  %-32s %s\n' "$t" "$seconds" "$runs" "${cov:-}" "$verdict"
done
exit $failed
