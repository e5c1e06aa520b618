#!/usr/bin/env bash
# The fair comparison of the mechanisms: every architecture trains the same
# reference preset on the same data for the same wall-time budget and thread
# count (tools/quality_m30k.sh: 20 minutes, scored, then on to MINUTES), is
# scored on test2016 with beam 5, and the runs go into one report: attn report
# writes runs/compare/report.html (curves against updates and wall time, and a
# table of speed, peak memory, best validation and test scores per arch).
# A half-finished comparison resumes: finished archs are skipped, a run cut
# short continues from its last.attn.
# With COMPARE_ARCHIVE=DIR each finished run is also kept small in DIR/<arch>
# (tools/archive_run.py: log, scores, train.log; no model files), an arch
# already in DIR counts as finished, and the report reads DIR/<arch> for the
# runs that are no longer in runs/compare (a comparison spread over machines).
# With COMPARE_COMMIT=SHA every arch trains with the attn (and scripts) of
# that commit, built in a worktree of its own (runs/compare-tree-SHA), so a
# comparison spread over days stays fair while the code moves on.
#   [COMPARE_ARCHIVE=docs/runs/m30k-60min] [COMPARE_COMMIT=SHA] tools/compare.sh [MULTI30K_DIR] [MINUTES] [ARCHS...]
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(realpath "${1:-../shared/data/multi30k}")
minutes=${2:-60}
shift $(( $# > 2 ? 2 : $# )) || true
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(transformer muse muse-simple convsan convsan2d fastdisa)
root=runs/compare
archive=${COMPARE_ARCHIVE:-}
mkdir -p "$root"
trainer=.  # where quality_m30k.sh and its attn come from
if [ -n "${COMPARE_COMMIT:-}" ]; then
  trainer=runs/compare-tree-$COMPARE_COMMIT
  [ -d "$trainer" ] || git worktree add --detach "$trainer" "$COMPARE_COMMIT" >&2
  ln -sfn "$(pwd)/runs" "$trainer/runs"  # its runs/compare is this one
  echo "== training with attn at commit $(git -C "$trainer" rev-parse --short HEAD)"
fi
runs=()
for arch in "${archs[@]}"; do
  done_file=score.avg5.${minutes}min.txt
  if [ -f "$root/$arch/$done_file" ]; then
    echo "== $arch: done ($root/$arch/score.${minutes}min.txt)"
  elif [ -n "$archive" ] && [ -f "$archive/$arch/$done_file" ]; then
    echo "== $arch: done, archived ($archive/$arch/score.${minutes}min.txt)"
    runs+=("$archive/$arch")
    continue
  else
    # On a fresh virtual machine the first touch of each page of RAM is slow
    # (the first run on a fresh machine took 4:15 for its first epoch, not 2:10):
    # touch 8 GB once, so that every arch starts on equal terms.
    python3 -c "b'\x01' * (8 << 30)"
    echo "== $arch: training for $minutes minutes in $root/$arch"
    (cd "$trainer" && QUALITY_MINUTES="20 $minutes" tools/quality_m30k.sh "$data" "$root/$arch" "$arch")
  fi
  runs+=("$root/$arch")
  if [ -n "$archive" ] && [ ! -f "$archive/$arch/$done_file" ]; then
    python3 tools/archive_run.py "$root/$arch" "$archive/$arch"
  fi
done
./attn report "${runs[@]}" -o "$root/report.html"
echo "report: $root/report.html"
