// The two tests of an attention-statistic claim (claims.h, docs/verdicts.md),
// on the runs' stats/<set>.<model>.json (attention_file.h), under the rule of
// the BLEU claims:
//   - per seed, the statistic of A's side and of B's side — the component's
//     layer(s) pooled over heads (and layers, for "all"), or its least-squares
//     slope against the join factor k over SET and its probes; B's side is A's
//     other layer, a constant, or group B's same layer — and the paired t of
//     their differences over the seeds both sides have;
//   - pooled: the common seeds' per-sentence rows and sums added line by line
//     (a sentence is the unit, the seeds' runs read the same sentences), and a
//     bootstrap over test sentences that applies the same draw to both sides:
//     sacreBLEU's paired bootstrap (NumPy's draws) of Σ sum / Σ rows for a
//     statistic; for a slope, the slope bootstrap over groups of lcm(k…)
//     consecutive test sentences of the BLEU slopes (slope_bootstrap.h).
// Holm and the verdict are judge_claims' (verdicts.h), as for every claim.
#pragma once
#include "attn/report/comparison.h"
#include "attn/report/verdicts.h"

namespace attn::report {

// Fills v's seeds, values, differences and tests, or v.absent (why it cannot
// be measured) and v.notes (why a test is missing). b: group B, nullptr when
// the claim compares A's own layers or a constant.
void judge_statistic(ClaimVerdict& v, const ArchSummary& a, const ArchSummary* b, const ComparisonOptions& options);

}  // namespace attn::report
