// The multi-seed comparison's part of attn report's page (comparison.h),
// above the per-run curves:
//   - the table by arch (<table id="archs">, one <tr class="arch"
//     data-arch="ARCH"> per arch): seeds, updates, then per model of the main
//     test set BLEU and chrF as mean ± sd, Δ BLEU to the baseline, the pooled
//     p-value and the pooled test's reading (better / worse / n.d.: the pooled
//     test alone, not a verdict on a claim), then each probe's BLEU; the
//     comparison's and each arch's notes below it;
//   - then `extra` (the claims' verdicts, verdicts.h, when given);
//   - the paired bootstrap of every set and model with the per-seed p-values
//     (<table id="paired">);
//   - BLEU by reference length on the main set (<figure data-plot="bleu-by-length">)
//     and BLEU against K, the sentences joined per probe line
//     (<figure data-plot="bleu-by-k">): one <polyline class="curve"
//     data-arch="ARCH"> per arch in its colour, seed means with ± sd whiskers.
#pragma once
#include <string>

#include "attn/report/comparison.h"

namespace attn::report {

// The sections (<section class="card">...) for a comparison with archs; "" without.
// `extra` (HTML) goes right after the table by arch.
std::string comparison_sections(const Comparison& comparison, const std::string& extra = "");

// The CSS the sections add to the page's.
std::string comparison_style();

}  // namespace attn::report
