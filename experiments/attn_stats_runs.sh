#!/usr/bin/env bash
# The attention statistics of a comparison's runs: for every run folder given
# that holds the model (RUN/best.attn), attn attn-stats teacher-forced on the
# test set and on its joined probes (test2016.join2/4/6/8, the long-input
# probes of experiments/compare.sh, made by experiments/make_long_test.py),
# written with each line's sums (--per-sentence) to RUN/stats/<set>.<model>.json,
# the run layout's stats files (docs/report.md) that attn report --claims
# decides attention-statistic claims on (docs/verdicts.md).
#
# A file that exists is never redone (attn attn-stats writes it atomically), so
# an interrupted call resumes where it stopped, and runs that are still training
# can be measured by a later call.
#
#   experiments/attn_stats_runs.sh [--data DIR] [--probe-dir DIR] [--probes "2 4 6 8"] [--model best]
#                                  [--threads T] [--archive DIR] RUN...
#
# --data       corpus folder with the test set <test>.de/.en (default data/multi30k)
# --probe-dir  where the probes are, or are made if missing (default: each run's comparison folder's
#              data/, OUT/data for OUT/<arch>/seed<S>, where experiments/compare.sh keeps them)
# --probes     the join factors K of the probes <test>.join<K> (default "2 4 6 8")
# --model      the model file's stem in RUN (default best: RUN/best.attn, stats/<set>.best.json)
# --threads    threads of attn attn-stats (default 1)
# --archive    also copy each run's stats/ into DIR/<arch>/seed<S>/stats/, the run's archive made by
#              experiments/compare.sh --archive DIR (model files are not archived, so the claims can
#              be decided again from the archive); a run not archived there is left out with a message
# Environment, as experiments/compare.sh: COMPARE_ATTN=PATH uses that binary; COMPARE_SRC/COMPARE_TGT
# the language suffixes (de, en); COMPARE_TEST the test set's prefix (test2016).
#
# Then, for example (docs/attention-stats.md):
#   attn report OUT/{transformer,transformer-wide,muse}/seed* --claims experiments/claims/attention.claims
#   experiments/attn_stats_chart.py entropy.svg OUT/{transformer,muse}/seed* --set test2016
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

data=data/multi30k probe_dir="" probes="2 4 6 8" model=best threads=1 archive="" runs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --probe-dir) probe_dir=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    -*) echo "attn_stats_runs: unknown option $1 (see the header of experiments/attn_stats_runs.sh)" >&2; exit 2 ;;
    *) runs+=("$1"); shift ;;
  esac
done
src=${COMPARE_SRC:-de} tgt=${COMPARE_TGT:-en} test=${COMPARE_TEST:-test2016}
fail() { echo "attn_stats_runs: $*" >&2; exit 2; }
[ ${#runs[@]} -gt 0 ] || fail "give the run folders (OUT/<arch>/seed<S>), e.g. runs/cmp-long/*/seed*"
for k in $probes; do [[ "$k" =~ ^[1-9][0-9]*$ ]] || fail "--probes must be whole numbers >= 1 (got $k)"; done
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || fail "--threads must be a positive whole number (got $threads)"
[[ "$model" =~ ^[A-Za-z0-9_-]+$ ]] || fail "--model is a model file's stem without a dot (got $model)"
for l in "$src" "$tgt"; do [ -f "$data/$test.$l" ] || fail "$data/$test.$l not found (--data DIR)"; done
for run in "${runs[@]}"; do [ -d "$run" ] || fail "$run: no such run folder"; done
[ -z "$archive" ] || [ -d "$archive" ] || fail "--archive $archive: no such folder"
data=$(realpath "$data")

if [ -n "${COMPARE_ATTN:-}" ]; then
  attn=$(realpath "$COMPARE_ATTN")
else
  make -s attn
  attn=$repo/attn
fi

# The probes of one folder, made once (make_long_test.py writes each file atomically).
ensure_probes() {
  local dir=$1 k
  mkdir -p "$dir"
  for k in $probes; do
    [ -f "$dir/$test.join$k.$src" ] && [ -f "$dir/$test.join$k.$tgt" ] ||
      python3 experiments/make_long_test.py "$k" "$data/$test" "$dir/$test.join$k" --langs="$src,$tgt"
  done
}

measured=0 skipped=0 kept=0
for run in "${runs[@]}"; do
  run=$(realpath "$run")
  if [ ! -f "$run/$model.attn" ]; then
    echo "== $run: no $model.attn, skipped"
    skipped=$((skipped + 1))
    continue
  fi
  dir=${probe_dir:-$(dirname "$(dirname "$run")")/data}
  ensure_probes "$dir"
  mkdir -p "$run/stats"
  for set in "$test" $(for k in $probes; do echo "$test.join$k"; done); do
    out=$run/stats/$set.$model.json
    if [ -f "$out" ]; then
      kept=$((kept + 1))
      continue
    fi
    if [ "$set" = "$test" ]; then prefix=$data/$set; else prefix=$dir/$set; fi
    echo "== $run: $set"
    "$attn" attn-stats -m "$run/$model.attn" -i "$prefix.$src" -t "$prefix.$tgt" --per-sentence -o "$out" \
      --threads "$threads" >/dev/null
    measured=$((measured + 1))
  done
  if [ -n "$archive" ]; then
    kept_dir=$archive/$(basename "$(dirname "$run")")/$(basename "$run")
    if [ -d "$kept_dir" ]; then
      mkdir -p "$kept_dir/stats"
      cp -p "$run"/stats/*."$model".json "$kept_dir/stats/"
    else
      echo "== $run: not archived in $archive ($kept_dir), its stats/ not copied"
    fi
  fi
done
echo "== attention statistics: $measured written, $kept there already, $skipped run(s) without $model.attn"
