// The verdicts of a claims file (claims.h) on a comparison over seeds
// (comparison.h): for each claim its per-seed differences, the seed-level
// paired t (and TOST for equivalence claims), the pooled seed-matched paired
// bootstrap (and its TOST), every p Holm-corrected over the file, and the
// rule's verdict (verdict_rule.h). docs/verdicts.md states it all.
//
// What a claim compares:
//   - A beats / is within M of B on SET MODEL: BLEU of that output, seed by
//     seed (the seeds both groups have). Pooled test: the common seeds'
//     translations concatenated into one paired sample, sacreBLEU's paired
//     bootstrap (NumPy's draws, as attn report's p-values).
//   - slopes: per seed, the least-squares slope of BLEU against k over SET
//     (k = 1) and its probes SET.join<K> both groups have. Pooled test: the
//     slope on the seeds' pooled statistics, resampled by groups of
//     consecutive test sentences (slope_bootstrap.h).
// A claim whose groups or outputs are missing is "not measured", with why.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/eval/paired_t.h"
#include "attn/report/claims.h"
#include "attn/report/comparison.h"
#include "attn/report/verdict_rule.h"

namespace attn::report {

struct PooledTest {
  std::string what;                     // how the sample was pooled and resampled
  double a_value = 0.0, b_value = 0.0;  // the pooled BLEU (or slope) of each group
  double difference = 0.0;              // a_value − b_value
  double p = 1.0;                       // two-sided, of the difference
  std::optional<double> p_holm;
  std::optional<eval::Equivalence> equivalence;  // TOST on the resampled differences
  std::optional<double> equivalence_p_holm;
};

struct SeedTest {
  eval::PairedT t;
  std::optional<double> p_holm;
  std::optional<eval::Equivalence> equivalence;  // TOST with Student t
  std::optional<double> equivalence_p_holm;
};

struct ClaimVerdict {
  Claim claim;
  std::string absent;  // why it could not be measured; empty when it was
  std::vector<int> seeds;
  std::vector<double> a_values, b_values, differences;  // per seed: BLEU, or slopes in BLEU per unit of k
  std::vector<double> p_per_seed;                       // BLEU claims: each seed's own paired bootstrap p
  std::vector<int> ks;                                  // slope claims: the k the slopes run over
  double mean_difference = 0.0;
  std::optional<PooledTest> pooled;
  std::optional<SeedTest> seed;
  std::vector<std::string> notes;
  Decision decision;
};

struct Verdicts {
  std::string path;
  double alpha = 0.05;
  std::size_t samples = 0;
  std::uint64_t bootstrap_seed = 0;
  std::size_t pooled_family = 0, seed_family = 0;  // the p-values Holm corrects over, per kind
  std::vector<ClaimVerdict> claims;
};

Verdicts judge_claims(const ClaimsFile& claims, const Comparison& comparison);

// The seed-level tests of v.differences: the paired t, and TOST for an
// equivalence claim; a note instead below two seeds.
void add_seed_tests(ClaimVerdict& v);

// {"claims_file", "alpha", "bootstrap", "family", "claims": [...]} (docs/verdicts.md).
nlohmann::json verdicts_json(const Verdicts& verdicts);
// The verdict table with the rule above it and one line of details per claim below.
std::string verdicts_markdown(const Verdicts& verdicts);
// The page's section (<section id="verdicts">).
std::string verdicts_html(const Verdicts& verdicts);

}  // namespace attn::report
