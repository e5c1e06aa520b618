// The page `attn report` writes: one self-contained HTML file (no network,
// no external script; the plots are inline SVG drawn here, so the page reads
// the same with scripts off) comparing training runs:
//   - with seed runs (comparison.h), first the comparison by arch
//     (comparison_page.h), and the runs coloured by arch family (colours.h);
//   - six plots: training loss, validation perplexity (log scale) and
//     validation BLEU, each against updates and against wall time; one
//     <polyline class="curve" data-run="NAME"> per run with data, in the
//     run's colour, and a legend by run name and arch;
//   - the table of runs_json (one <tr class="run" data-run="NAME"> per run);
//   - every run's notes (missing or corrupt log, no validation yet, still
//     in progress, ...);
//   - with a claims file's verdicts (verdicts.h), their table after the comparison;
//   - the table as JSON in <script type="application/json" id="attn-report">
//     (report_json: runs_json, plus "comparison" when there are seed runs).
// The report layer sits on top: it reads train's logs, model files and
// scores, escaped with text/html.h.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/report/chart.h"
#include "attn/report/comparison.h"
#include "attn/report/run_summary.h"
#include "attn/report/verdicts.h"

namespace attn::report {

// With verdicts (--claims), their section follows the comparison's table.
std::string report_page(const std::vector<RunSummary>& runs, const Comparison& comparison = {},
                        const Verdicts* verdicts = nullptr);

// What --json prints and the page embeds: runs_json(runs), plus
// "comparison": comparison_json(comparison) when it has archs, and
// "verdicts": verdicts_json(*verdicts) when given.
nlohmann::json report_json(const std::vector<RunSummary>& runs, const Comparison& comparison = {},
                           const Verdicts* verdicts = nullptr);

}  // namespace attn::report
