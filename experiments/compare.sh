#!/usr/bin/env bash
# The comparison of the mechanisms over several seeds. Every (arch, seed) run
# trains the same preset on the same data with the same budget — updates (the
# same number for every arch: isolates the mechanism) or minutes (the same wall
# time: includes its speed) — and the same thread count, then is scored with
# beam 5 on test2016 and on its long-input probes (test2016 joined 2, 4 and 6
# sentences at a time, experiments/make_long_test.py), with best.attn and with the
# average of the last 5 checkpoints. attn report OUT/*/seed* --refs OUT/refs draws the result.
#
# Re-running the same command continues: a finished step is never redone (each
# writes its file atomically), an interrupted training resumes from its
# last.attn (bit-identical), so a comparison of many hours can be spread over
# sittings, and --jobs can change between them. Runs go seed by seed, so the
# runs finished at any moment cover whole seeds.
#
#   experiments/compare.sh [--data DIR] [--out DIR] [--seeds "1 2 3"] (--updates N | --minutes M)
#                    [--threads T] [--jobs J] [--commit SHA] [--archive DIR] [--probes "2 4 6"] [--beam B]
#                    [ARCH...] [-- EXTRA TRAIN FLAGS]
#
# --data    corpus folder with train/valid/test2016 .de/.en (default data/multi30k, tools/prepare_multi30k.sh)
# --out     where the runs go: OUT/<arch>/seed<S>/ (default runs/compare)
# --threads threads of each run (default 1: results depend on it, keep it for a comparison)
# --jobs    runs at a time (default 1; 2 on an idle 2-core machine)
# --commit  train and translate with the attn of that commit, built in a worktree
#           of its own (OUT/attn-SHA), so a comparison spread over days stays fair
#           while the code moves on
# --archive keep each finished run small in DIR/<arch>/seed<S> (experiments/archive_run.py:
#           log, scores, the translations' per-segment statistics in the run layout of
#           docs/report.md; no model files, no translations) to commit; a run archived
#           there counts as done, so a comparison can continue on a fresh checkout;
#           a finished run not archived yet is archived by the next call
# Without archs: transformer muse muse-simple muse-separate convsan convsan2d fastdisa.
# An arch may be a named variant, NAME=ARCH,FLAG=VALUE,...: ARCH trained with
# those flags (in place of the common ones they name), in OUT/NAME/seed<S> (attn report names
# its runs NAME), e.g. the Transformer matched to MUSE's parameter count:
#   transformer-wide=transformer,--ffn-dim=1184
# Environment: COMPARE_ATTN=PATH uses that binary (tests); COMPARE_SRC/COMPARE_TGT
# the language suffixes (de, en); COMPARE_TEST the test set's prefix (test2016).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

data=data/multi30k out=runs/compare seeds="1 2 3" updates="" minutes="" threads=1 jobs=1
commit="" archive="" probes="2 4 6" beam=5 archs=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --updates) updates=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "compare: unknown option $1 (see the header of experiments/compare.sh)" >&2; exit 2 ;;
    *) archs+=("$1"); shift ;;
  esac
done
[ ${#archs[@]} -gt 0 ] || archs=(transformer muse muse-simple muse-separate convsan convsan2d fastdisa)
src=${COMPARE_SRC:-de} tgt=${COMPARE_TGT:-en} test=${COMPARE_TEST:-test2016}
fail() { echo "compare: $*" >&2; exit 2; }
{ [ -n "$updates" ] && [ -z "$minutes" ]; } || { [ -z "$updates" ] && [ -n "$minutes" ]; } ||
  fail "give exactly one budget: --updates N (same updates for every arch) or --minutes M (same wall time)"
[[ "${updates:-1}" =~ ^[1-9][0-9]*$ ]] || fail "--updates must be a positive whole number (got $updates)"
[[ "${minutes:-1}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "--minutes must be a positive number (got $minutes)"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || fail "--jobs must be a positive whole number (got $jobs)"
for s in $seeds; do [[ "$s" =~ ^[0-9]+$ ]] || fail "--seeds must be whole numbers (got $s)"; done
for f in train valid "$test"; do
  for l in "$src" "$tgt"; do [ -f "$data/$f.$l" ] || fail "$data/$f.$l not found (--data DIR)"; done
done
data=$(realpath "$data")
mkdir -p "$out" ${archive:+"$archive"}
out=$(realpath "$out")
[ -z "$archive" ] || archive=$(realpath "$archive")

# The attn that trains, translates and scores.
if [ -n "${COMPARE_ATTN:-}" ]; then
  attn=$(realpath "$COMPARE_ATTN")
elif [ -n "$commit" ]; then
  sha=$(git rev-parse --short=12 "$commit^{commit}") || fail "--commit $commit is not a commit of this repository"
  tree=$out/attn-$sha
  [ -d "$tree" ] || git worktree add --detach "$tree" "$sha" >&2
  [ -x "$tree/attn" ] || make -C "$tree" -s -j2 attn >&2
  attn=$tree/attn
else
  make -s attn
  attn=$repo/attn
fi
echo "== attn: $attn ($("$attn" --version 2>/dev/null | head -1 || true))"

# The test sets: the test set itself and its joined probes.
sets=("$test")
mkdir -p "$out/data"
for k in $probes; do
  [ -f "$out/data/$test.join$k.$tgt" ] ||
    python3 experiments/make_long_test.py "$k" "$data/$test" "$out/data/$test.join$k" --langs="$src,$tgt"
  sets+=("$test.join$k")
done
set_prefix() { if [ "$1" = "$test" ]; then echo "$data/$1"; else echo "$out/data/$1"; fi; }
# The references beside the runs: attn report --refs OUT/refs scores the kept
# translations itself (by length, and paired tests between archs). Never in the
# archive: the corpus stays where --data is (it must not be committed); a fresh
# checkout rebuilds OUT/refs by running this command again.
mkdir -p "$out/refs"
for set in "${sets[@]}"; do
  [ -f "$out/refs/$set.$tgt" ] || cp "$(set_prefix "$set").$tgt" "$out/refs/$set.$tgt"
done

# Runs a command in the background and forwards SIGINT/SIGTERM to it, so a
# kill of this script reaches attn train (which then saves a resumable
# checkpoint) instead of leaving it running on its own; returns its status.
run_child() {
  "$@" &
  local pid=$! status
  trap 'kill -TERM "$pid" 2>/dev/null' INT TERM
  wait "$pid"
  status=$?
  while kill -0 "$pid" 2>/dev/null; do wait "$pid"; status=$?; done  # a signal interrupted wait: let it finish
  trap - INT TERM
  return "$status"
}

# NAME=ARCH,FLAG=VALUE,...: the run's name, its arch and its own flags.
variant_name() { echo "${1%%=*}"; }
variant_arch() { local rest=${1#*=}; echo "${rest%%,*}"; }
variant_flags() { [[ "$1" == *=*,* ]] && tr ',' '\n' <<<"${1#*,}" || true; }

# A finished run kept small in the archive: its log, scores and the per-segment
# statistics of its translations in the run layout (docs/report.md; never the
# translations: they hold the corpus's text), the attn that made it, and `done`
# last. The statistics need an attn with score --segments: a frozen older one
# hands them to this checkout's.
archive_one() {
  local scorer=$attn
  if ! "$attn" score --help 2>/dev/null | grep -q -- --segments; then
    (cd "$repo" && make -s attn)
    scorer=$repo/attn
  fi
  python3 experiments/archive_run.py "$1" "$2" --attn "$scorer" --refs "$out/refs" --tgt "$tgt"
  echo "attn ${sha:-of $attn}; experiments/compare.sh of $(git -C "$repo" rev-parse --short=12 HEAD)" >"$2/commit"
  touch "$2/done"
}

# One (arch, seed) run, every step skipped when its file exists.
run_one() {
  local name arch seed=$2
  name=$(variant_name "$1")
  arch=$(variant_arch "$1")
  local own=()
  mapfile -t own < <(variant_flags "$1")
  local run=$out/$name/seed$seed kept=${archive:+$archive/$name/seed$seed}
  # The variant's own flags replace the common ones of the same name.
  local common=() i=0 word flag
  while [ $i -lt ${#extra[@]} ]; do
    word=${extra[$i]}
    flag=${word%%=*}
    i=$((i + 1))
    if [[ "$word" == --* ]] && printf '%s\n' "${own[@]%%=*}" | grep -qxF -- "$flag"; then
      [[ "$word" == *=* ]] || { [ $i -lt ${#extra[@]} ] && [[ "${extra[$i]}" != --* ]] && i=$((i + 1)); } || true
      continue
    fi
    common+=("$word")
  done
  if [ -n "$kept" ] && [ -f "$kept/done" ]; then echo "== $name seed $seed: done, archived ($kept)"; return 0; fi
  mkdir -p "$run"
  exec 9>"$run/.lock"
  if ! flock -n 9; then echo "== $name seed $seed: in progress elsewhere, skipped"; return 0; fi
  if [ -f "$run/done" ]; then
    echo "== $name seed $seed: done"
    [ -z "$kept" ] || archive_one "$run" "$kept"
    return 0
  fi
  local budget
  if [ -n "$updates" ]; then budget=(--max-updates "$updates"); else budget=(--max-time "$minutes"); fi
  if [ ! -f "$run/train.done" ]; then
    echo "== $name seed $seed: training ($run)"
    run_child "$attn" train --train "$data/train" --valid "$data/valid" --src "$src" --tgt "$tgt" --arch "$arch" \
      --seed "$seed" --save-dir "$run" --threads "$threads" --keep-last 5 --log-every 50 --quiet \
      "${budget[@]}" "${common[@]}" "${own[@]}" 2>>"$run/train.log" || {
      local status=$?
      echo "== $name seed $seed: attn train exited with $status (see $run/train.log); rerun to resume" >&2
      return "$status"
    }
    touch "$run/train.done"
  fi
  [ -f "$run/avg5.attn" ] || "$attn" average --last 5 "$run" -o "$run/avg5.attn" --threads "$threads"
  mkdir -p "$run/hyp" "$run/score"
  local set model prefix
  for set in "${sets[@]}"; do
    prefix=$(set_prefix "$set")
    for model in best avg5; do
      local hyp=$run/hyp/$set.$model.txt score=$run/score/$set.$model.json
      if [ ! -f "$hyp" ]; then
        "$attn" translate -m "$run/$model.attn" -i "$prefix.$src" -o "$hyp" --beam "$beam" \
          --threads "$threads" 2>>"$run/translate.log"
        # An attn before 1011289 let a hypothesis that holds a line-break piece
        # span two lines; such a file is translated again by this checkout's attn
        # (the same search, bit for bit; it writes the break as a space).
        if [ "$(wc -l <"$hyp")" != "$(wc -l <"$prefix.$src")" ] && [ "$attn" != "$repo/attn" ]; then
          echo "== $name seed $seed: $hyp has a line break inside a hypothesis; translated again by $repo/attn" >&2
          (cd "$repo" && make -s attn)
          "$repo/attn" translate -m "$run/$model.attn" -i "$prefix.$src" -o "$hyp" --beam "$beam" \
            --threads "$threads" 2>>"$run/translate.log"
        fi
      fi
      if [ ! -f "$score" ]; then
        "$attn" score --ref "$prefix.$tgt" -i "$hyp" --metrics bleu,chrf --format json >"$score.tmp"
        mv "$score.tmp" "$score"
      fi
    done
  done
  touch "$run/done"
  [ -z "$kept" ] || archive_one "$run" "$kept"
  echo "== $name seed $seed: done; $test BLEU $(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))[0]['score'], 2))" "$run/score/$test.best.json" 2>/dev/null || echo '?')"
}

# Ctrl-C or a kill of this script stops its runs too (attn train saves a resumable checkpoint on SIGINT/SIGTERM).
trap 'trap - INT TERM; kill -TERM $(jobs -p) 2>/dev/null; wait; exit 130' INT TERM
for seed in $seeds; do
  for arch in "${archs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_one "$arch" "$seed" &
  done
done
wait
unfinished=()
for seed in $seeds; do
  for arch in "${archs[@]}"; do
    name=$(variant_name "$arch")
    [ -f "$out/$name/seed$seed/done" ] || { [ -n "$archive" ] && [ -f "$archive/$name/seed$seed/done" ]; } ||
      unfinished+=("$name/seed$seed")
  done
done
[ ${#unfinished[@]} -eq 0 ] || { echo "compare: not finished: ${unfinished[*]}; rerun the same command to continue" >&2; exit 1; }
if [ -n "$archive" ]; then
  echo "== all runs done: $out, archived in $archive; attn report $archive/*/seed* -o report.html"
else
  echo "== all runs done: $out; attn report $out/*/seed* --refs $out/refs -o report.html"
fi
