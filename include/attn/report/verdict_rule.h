// The one rule that turns a claim's two tests into a verdict (docs/verdicts.md).
// Each claim is tested twice: by the pooled seed-matched paired bootstrap
// (the test sentences' variance) and by the paired t over seeds (the training
// runs' variance), every p Holm-corrected over the claims file's family.
//   - A direction claim (A beats B; A's slope above or below B's) holds when
//     both tests find the claimed direction at Holm p < α, does not hold when
//     both find the opposite one, and is otherwise not distinguishable.
//   - An equivalence claim (|A − B| < M) is "equivalent within ±M" when both
//     equivalence tests (TOST) reject |A − B| >= M at Holm p < α; else A or B
//     is better when both difference tests find that direction; else not
//     distinguishable.
#pragma once
#include <optional>
#include <string>

#include "attn/report/claims.h"

namespace attn::report {

// One test of a claim after Holm; absent when it could not be run.
struct TestOutcome {
  bool present = false;
  double difference = 0.0;                   // its estimate of A − B: the direction it found
  double p_holm = 1.0;                       // the difference test's adjusted p
  std::optional<double> equivalence_p_holm;  // the TOST's adjusted p (equivalence claims)
};

// +1 or −1 when the test finds a nonzero difference of that sign at Holm p < alpha, else 0.
int direction(const TestOutcome& test, double alpha);

struct Decision {
  std::string verdict;  // "holds", "does not hold", "equivalent within ±0.5", "muse better", "not distinguishable", ...
  std::string rule;     // which part of the rule fired
};

Decision decide(const Claim& claim, const TestOutcome& pooled, const TestOutcome& seed, double alpha);

}  // namespace attn::report
