#!/usr/bin/env bash
# attn translate against CTranslate2's Translator on the same Transformer (`attn export --to
# ctranslate2`), side by side in one run: FP32 and int8 (CTranslate2's int8_float32: int8 weight
# products, FP32 elsewhere, as attn's --compute-type int8), batch 64 and 1, 1 and 2 threads, the
# two engines alternating in every round so the machine's drift hits both alike; attn's bf16 beside
# them (CTranslate2 has no bf16 on CPUs). Prints medians of sentences/s over the rounds (model
# loading included, as a user sees it), peak memory, the share of output lines the two engines agree
# on, and BLEU of each against the reference.
#
#   bench/ctranslate2_bench.sh MODEL SRC REF [OUT_DIR]
#
# CTranslate2 runs its threads two ways: intra_threads (one replica whose operators use T OpenMP
# threads) and inter_threads (T replicas of one thread, each decoding its own batches). At 2 threads
# every layout is measured — 1×2 with libgomp's waiting threads passive (OMP_WAIT_POLICY=PASSIVE:
# on a loaded 2-core host its spinning threads stalled, 29 against 607 sentences/s) and active (the
# default, fastest on a quiet host), and 2×1 — and its best median is the cell, named; attn runs its
# default (--threads T: T decoders, each one thread, at batch 1 taking sentences as they come).
#
# Needs the CTranslate2 build of bench/ctranslate2_build.sh (build-ct2/ct2_translate); without
# it, says how to make it and exits 0. Environment: ROUNDS=3 BEAM=5 SENTENCES_B1=200 (batch 1
# decodes the first SENTENCES_B1 lines; batch 64 the whole file) THREADS="1 2" TYPES="fp32 int8"
# BATCHES="64 1" ATTN_ONLY_TYPES="bf16" ATTN=./attn CT2=build-ct2/ct2_translate CT2_ENV="VAR=value …"
# (more environment for CTranslate2's runs, e.g. CT2_FORCE_CPU_ISA=AVX512: on AMD CPUs it picks AVX2
# for its own kernels; its GEMMs are oneDNN's, which picks its own).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench/ctranslate2_bench.sh MODEL SRC REF [OUT_DIR]" >&2; exit 2; }
model=$1 src=$2 ref=$3 out=${4:-runs/bench-ctranslate2}
rounds=${ROUNDS:-3} beam=${BEAM:-5} n_b1=${SENTENCES_B1:-200}
threads_list=(${THREADS:-1 2})
types=(${TYPES:-fp32 int8})
attn_only_types=(${ATTN_ONLY_TYPES-bf16})
batches=(${BATCHES:-64 1})
attn=${ATTN:-./attn}
ct2=${CT2:-build-ct2/ct2_translate}
if [ ! -x "$ct2" ]; then
  echo "bench: ctranslate2 skipped: no CTranslate2 build ($ct2). Make it once (5-10 min on 2 cores):"
  echo "  bench/ctranslate2_build.sh CT2_GIT SPDLOG_GIT CPU_FEATURES_GIT   (bench/README.md, CTranslate2)"
  exit 0
fi
mkdir -p "$out"
rm -rf "$out/ct2"
"$attn" export --to ctranslate2 "$model" "$out/ct2" 2> "$out/export.log" || { cat "$out/export.log" >&2; exit 1; }
positions=$("$attn" info --json "$model" | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["max_positions"])')
head -n "$n_b1" "$src" > "$out/src.b1"
head -n "$n_b1" "$ref" > "$out/ref.b1"

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "attn $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(head -1 "$(dirname "$ct2")/BUILT_WITH" 2>/dev/null || echo 'CTranslate2 ?')"
# CTranslate2's own account of its backends on this CPU (its ISA, which GEMM library serves each type).
echo x | env ${CT2_ENV:-} CT2_VERBOSE=1 "$ct2" "$out/ct2" --beam 1 --max-positions "$positions" 2>&1 >/dev/null |
  sed -n 's/.*\[info\] *//p' | grep -E 'CPU:|ISA|MKL|backend' | sed 's/^/CTranslate2: /'
echo "model $model; beam $beam; $rounds rounds; batch 1 on the first $n_b1 lines; CTranslate2 environment: ${CT2_ENV:-(nothing added)}"

# The CTranslate2 thread layouts measured at T threads: inter×intra[/wait policy].
ct2_layouts() {
  if [ "$1" = 1 ]; then echo "1x1"; else echo "1x$1/passive 1x$1/active $1x1"; fi
}

# run ENGINE LAYOUT TYPE BATCH THREADS INPUT OUTPUT → "seconds peak_kB" on stdout
run() {
  local engine=$1 layout=$2 type=$3 batch=$4 threads=$5 input=$6 output=$7 cmd env
  env=(OMP_NUM_THREADS=$threads)
  if [ "$engine" = attn ]; then
    cmd=("$attn" translate -m "$model" --beam "$beam" --batch-size "$batch" --compute-type "$type" --threads "$threads")
  else
    local ct2_type=float32 inter=${layout%%x*} rest=${layout#*x} intra policy
    intra=${rest%%/*}
    policy=$([ "$rest" != "$intra" ] && echo "${rest#*/}" || echo passive)
    [ "$type" = int8 ] && ct2_type=int8_float32
    cmd=("$ct2" "$out/ct2" --beam "$beam" --batch-size "$batch" --compute-type "$ct2_type" --threads "$intra"
      --inter-threads "$inter" --max-positions "$positions")
    env=(OMP_NUM_THREADS=$intra OMP_WAIT_POLICY=${policy^^} ${CT2_ENV:-})
  fi
  env "${env[@]}" /usr/bin/time -f '%e %M' -o "$output.time" "${cmd[@]}" < "$input" > "$output" 2> "$output.err" || {
    cat "$output.err" >&2
    exit 1
  }
  cat "$output.time"
}

declare -A rate peak
for round in $(seq 1 "$rounds"); do
  for threads in "${threads_list[@]}"; do
    for type in "${types[@]}" "${attn_only_types[@]}"; do
      for batch in "${batches[@]}"; do
        if [ "$batch" = 1 ]; then input=$out/src.b1; else input=$src; fi
        n=$(wc -l < "$input")
        runs=("attn -")
        [[ " ${types[*]} " == *" $type "* ]] && for layout in $(ct2_layouts "$threads"); do runs+=("ct2 $layout"); done
        for r in "${runs[@]}"; do
          read -r engine layout <<<"$r"
          key=$engine.$layout.$type.$batch.$threads
          read -r seconds kb <<<"$(run "$engine" "$layout" "$type" "$batch" "$threads" "$input" "$out/hyp.${key//\//-}")"
          rate[$key]="${rate[$key]:-} $(echo "$n / $seconds" | bc -l)"
          peak[$key]="${peak[$key]:-} $kb"
          printf 'round %d %-4s %-10s %-5s batch %-3s threads %s %9.2f sentences/s %7.1f MB\n' "$round" "$engine" \
            "$layout" "$type" "$batch" "$threads" "$(echo "$n / $seconds" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
        done
      done
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
bleu() { "$attn" score --ref "$1" -i "$2" | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)[0]["score"])'; }
echo
printf '%-5s %-5s %-7s %12s %12s %-12s %8s %9s %9s %10s %8s %8s\n' type batch threads "attn sent/s" "ct2 sent/s" \
  "ct2 layout" "ct2÷attn" "attn MB" "ct2 MB" "identical" "BLEU a" "BLEU c"
for type in "${types[@]}" "${attn_only_types[@]}"; do
  for batch in "${batches[@]}"; do
    for threads in "${threads_list[@]}"; do
      a=$(echo "${rate[attn.-.$type.$batch.$threads]}" | median)
      am=$(echo "${peak[attn.-.$type.$batch.$threads]}" | median)
      ha=$out/hyp.attn.-.$type.$batch.$threads
      if [ "$batch" = 1 ]; then r=$out/ref.b1; else r=$ref; fi
      if [[ " ${types[*]} " != *" $type "* ]]; then
        printf '%-5s %-5s %-7s %12.2f %12s %-12s %8s %9.1f %9s %10s %8s %8s\n' "$type" "$batch" "$threads" "$a" "—" "—" \
          "—" "$(echo "$am / 1024" | bc -l)" "—" "—" "$(bleu "$r" "$ha")" "—"
        continue
      fi
      best="" c=0
      for layout in $(ct2_layouts "$threads"); do
        m=$(echo "${rate[ct2.$layout.$type.$batch.$threads]}" | median)
        if [ -z "$best" ] || (($(echo "$m > $c" | bc -l))); then best=$layout c=$m; fi
      done
      cm=$(echo "${peak[ct2.$best.$type.$batch.$threads]}" | median)
      hc=$out/hyp.ct2.${best//\//-}.$type.$batch.$threads
      same=$(paste -d '\t' "$ha" "$hc" | awk -F '\t' '{n++; if ($1 == $2) s++} END {printf "%.1f%%", n ? 100 * s / n : 0}')
      printf '%-5s %-5s %-7s %12.2f %12.2f %-12s %8.2f %9.1f %9.1f %10s %8s %8s\n' "$type" "$batch" "$threads" "$a" "$c" \
        "$best" "$(echo "$c / $a" | bc -l)" "$(echo "$am / 1024" | bc -l)" "$(echo "$cm / 1024" | bc -l)" "$same" \
        "$(bleu "$r" "$ha")" "$(bleu "$r" "$hc")"
    done
  done
done
echo
echo "CTranslate2's layouts at 2+ threads (median sentences/s):"
for type in "${types[@]}"; do
  for batch in "${batches[@]}"; do
    for threads in "${threads_list[@]}"; do
      [ "$threads" = 1 ] && continue
      line="$type batch $batch threads $threads:"
      for layout in $(ct2_layouts "$threads"); do
        line+=" $layout $(printf '%.2f' "$(echo "${rate[ct2.$layout.$type.$batch.$threads]}" | median)")"
      done
      echo "$line"
    done
  done
done
