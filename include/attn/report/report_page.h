// The page `attn report` writes: one self-contained HTML file (no network,
// no external script; the plots are inline SVG drawn here, so the page reads
// the same with scripts off) comparing training runs:
//   - six plots: training loss, validation perplexity (log scale) and
//     validation BLEU, each against updates and against wall time; one
//     <polyline class="curve" data-run="NAME"> per run with data, in the
//     run's colour, and a legend by run name and arch;
//   - the table of runs_json (one <tr class="run" data-run="NAME"> per run);
//   - every run's notes (missing or corrupt log, no validation yet, still
//     in progress, ...);
//   - the table as JSON in <script type="application/json" id="attn-report">.
// The report layer sits on top: it reads train's logs, model files and
// scores, and borrows the attention page's HTML escaping (decode/maps_page.h).
#pragma once
#include <string>
#include <vector>

#include "attn/report/run_summary.h"

namespace attn::report {

std::string report_page(const std::vector<RunSummary>& runs);

// Axis ticks: "nice" values (1, 2 or 5 × 10^k steps) covering [lo, hi]
// with about `target` intervals; the first and last tick bound the axis.
std::vector<double> linear_ticks(double lo, double hi, int target);

}  // namespace attn::report
