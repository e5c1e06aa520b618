// Whether an arch differs from the baseline beyond seed noise: sacreBLEU's
// paired bootstrap (eval/significance.h) on seed-matched outputs — seed s of
// the arch against seed s of the baseline, same test set, same model.
//   - per seed: one test per common seed;
//   - pooled: the common seeds' segments concatenated into one paired sample
//     (arch seeds 1..n against baseline seeds 1..n, references repeated), so
//     one p-value weighs the training noise of every seed at once; the
//     page's verdicts use it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attn/eval/significance.h"

namespace attn::report {

struct SeedPairing {
  std::vector<int> seeds;          // the common seeds, ascending
  std::vector<double> p_per_seed;  // [seeds]
  double p_pooled = 1.0;
  double pooled_score = 0.0;               // the arch's score on the concatenated sample
  double pooled_baseline_score = 0.0;      // the baseline's
  std::vector<double> pooled_differences;  // the pooled bootstrap's resamples: arch − baseline, each
};

// The rows of several corpora one after another (all with the same fields).
eval::SegmentStats concatenate(std::span<const eval::SegmentStats* const> parts);

// baseline[i] and system[i] are the statistics of seed seeds[i] (same segments).
SeedPairing pair_seeds(std::span<const int> seeds, std::span<const eval::SegmentStats* const> baseline,
                       std::span<const eval::SegmentStats* const> system, const eval::ScoreFromStats& score,
                       std::size_t samples, std::uint64_t seed);

// The suggested reading of a comparison against the baseline: "better" or
// "worse" when the mean difference has that sign and the pooled p < 0.05,
// else "not distinguishable".
std::string verdict(double mean_difference, double p_pooled);

}  // namespace attn::report
