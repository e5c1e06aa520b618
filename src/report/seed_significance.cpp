#include "attn/report/seed_significance.h"

#include "attn/core/error.h"

namespace attn::report {

eval::SegmentStats concatenate(std::span<const eval::SegmentStats* const> parts) {
  eval::SegmentStats all;
  for (const eval::SegmentStats* part : parts) {
    if (part->segments() == 0) continue;
    require(all.fields == 0 || all.fields == part->fields, "statistics of different metrics cannot be concatenated");
    all.fields = part->fields;
    all.values.insert(all.values.end(), part->values.begin(), part->values.end());
  }
  return all;
}

SeedPairing pair_seeds(std::span<const int> seeds, std::span<const eval::SegmentStats* const> baseline,
                       std::span<const eval::SegmentStats* const> system, const eval::ScoreFromStats& score,
                       std::size_t samples, std::uint64_t seed) {
  require(!seeds.empty() && seeds.size() == baseline.size() && seeds.size() == system.size(),
          "pairing seeds needs one baseline and one system output per seed");
  SeedPairing pairing;
  pairing.seeds.assign(seeds.begin(), seeds.end());
  for (std::size_t i = 0; i < seeds.size(); ++i)
    pairing.p_per_seed.push_back(eval::paired_bootstrap(*baseline[i], *system[i], score, samples, seed).p_value);
  const eval::SegmentStats pooled_baseline = concatenate(baseline), pooled_system = concatenate(system);
  const eval::PairedResult pooled = eval::paired_bootstrap(pooled_baseline, pooled_system, score, samples, seed);
  pairing.p_pooled = pooled.p_value;
  pairing.pooled_score = pooled.score;
  pairing.pooled_baseline_score = score(pooled_baseline.sum());
  pairing.pooled_differences = pooled.differences;
  return pairing;
}

std::string verdict(double mean_difference, double p_pooled) {
  if (p_pooled < 0.05 && mean_difference > 0) return "better";
  if (p_pooled < 0.05 && mean_difference < 0) return "worse";
  return "not distinguishable";
}

}  // namespace attn::report
