#!/usr/bin/env bash
# The fair comparison of the mechanisms: every architecture trains the same
# reference preset on the same data for the same wall-time budget and thread
# count (tools/quality_m30k.sh: 20 minutes, scored, then on to MINUTES), is
# scored on test2016 with beam 5, and the runs go into one report: attn report
# writes runs/compare/report.html (curves against updates and wall time, and a
# table of speed, peak memory, best validation and test scores per arch).
# A half-finished comparison resumes: finished archs are skipped, a run cut
# short continues from its last.attn.
#   tools/compare.sh [MULTI30K_DIR] [MINUTES] [ARCHS...]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data/multi30k}
minutes=${2:-60}
shift $(( $# > 2 ? 2 : $# )) || true
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(transformer muse muse-simple convsan convsan2d fastdisa)
root=runs/compare
mkdir -p "$root"
for arch in "${archs[@]}"; do
  if [ -f "$root/$arch/score.avg5.${minutes}min.txt" ]; then
    echo "== $arch: done ($root/$arch/score.${minutes}min.txt)"
    continue
  fi
  echo "== $arch: training for $minutes minutes in $root/$arch"
  QUALITY_MINUTES="20 $minutes" tools/quality_m30k.sh "$data" "$root/$arch" "$arch"
done
if ./attn report --help >/dev/null 2>&1; then
  ./attn report "${archs[@]/#/$root/}" -o "$root/report.html"
  echo "report: $root/report.html"
fi
