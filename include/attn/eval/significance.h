// Paired significance tests between MT systems, as sacreBLEU 2.x's
// significance.py computes them, on per-segment sufficient statistics so
// any corpus metric can use them (BLEU, chrF, TER; `attn report` for
// seed-matched runs):
// - paired bootstrap resampling (Koehn 2004, Moses' script): each resample
//   draws segment indices with replacement; the same draws serve every
//   system; a system's 95% CI is the 2.5th/97.5th percentile of its
//   resampled scores; the p-value counts resamples whose centred absolute
//   difference to the baseline exceeds the real one.
// - approximate randomization (Riezler & Maxwell 2005, multeval): each trial
//   swaps each segment's pair of outputs on a coin flip.
// p = (c + 1) / (n + 1), c counting strictly greater differences, so a system
// compared with itself gets the smallest p, 1 / (n + 1) (multeval's rule,
// kept by sacreBLEU: a zero difference is not attributed to chance).
// The draws are NumPy's for default_rng(seed) (numpy_random.h), so with the
// same seed the resamples are sacreBLEU's own.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace attn::eval {

// One row of `fields` numbers per segment (BLEU: hyp_len, ref_len, correct
// per order, total per order; chrF: hyp, ref, match per order; TER: edits,
// average reference length). Summing rows gives the corpus statistics.
struct SegmentStats {
  std::size_t fields = 0;
  std::vector<double> values;  // [segments * fields], row-major

  std::size_t segments() const { return fields == 0 ? 0 : values.size() / fields; }
  std::span<const double> row(std::size_t segment) const { return {values.data() + segment * fields, fields}; }
  void append(std::span<const double> row);
  std::vector<double> sum() const;
};

// A metric's corpus score from summed statistics ([fields]).
using ScoreFromStats = std::function<double(std::span<const double> summed)>;

// sacreBLEU's estimate_ci over resampled scores: the mean, and the 95% CI as
// sorted[n/40] .. sorted[n - n/40 - 1]; half_width is what sacreBLEU prints
// after "±".
struct ConfidenceInterval {
  double mean = 0.0;
  double low = 0.0;
  double high = 0.0;
  double half_width = 0.0;
};
ConfidenceInterval estimate_ci(std::vector<double> scores);

struct PairedResult {
  double score = 0.0;                         // the system's corpus score
  double p_value = 1.0;                       // against the baseline
  std::optional<ConfidenceInterval> ci;       // bootstrap: the system's score
  std::optional<ConfidenceInterval> diff_ci;  // bootstrap: system minus baseline (not printed by sacreBLEU)
  std::vector<double> differences;            // bootstrap: each resample's system − baseline score
};

// sacreBLEU's paired-bootstrap p-value from resampled differences (system −
// baseline, any statistic): centred absolute differences |Δ*| − mean |Δ*|
// (the null hypothesis expects none) counted where they exceed |real|,
// p = (c + 1)/(B + 1). Two-sided: the sign comes from the real difference.
double centred_bootstrap_p(std::span<const double> resampled_differences, double real_difference);

// The scores of `samples` bootstrap resamples; indices: [samples * segments]
// (bootstrap_indices()).
std::vector<double> resampled_scores(const SegmentStats& stats, const ScoreFromStats& score,
                                     std::span<const std::uint32_t> indices);

// The baseline's row of sacreBLEU's table: its score and bootstrap CI.
PairedResult bootstrap_baseline(const SegmentStats& baseline, const ScoreFromStats& score,
                                std::span<const std::uint32_t> indices);

// Paired bootstrap of `system` against `baseline` (same segments) on the
// given resample indices ([samples * segments]).
PairedResult paired_bootstrap(const SegmentStats& baseline, const SegmentStats& system, const ScoreFromStats& score,
                              std::span<const std::uint32_t> indices);

// The same with sacreBLEU's draws for `samples` resamples and `seed`
// (sacreBLEU: 1000 and 12345).
PairedResult paired_bootstrap(const SegmentStats& baseline, const SegmentStats& system, const ScoreFromStats& score,
                              std::size_t samples, std::uint64_t seed);

// Approximate randomization on the given coin flips ([trials * segments];
// 1 keeps the pair, as sacreBLEU's pos_sel).
PairedResult paired_approximate_randomization(const SegmentStats& baseline, const SegmentStats& system,
                                              const ScoreFromStats& score, std::span<const std::uint8_t> flips);

// The same with sacreBLEU's draws for `trials` (sacreBLEU: 10000) and `seed`.
PairedResult paired_approximate_randomization(const SegmentStats& baseline, const SegmentStats& system,
                                              const ScoreFromStats& score, std::size_t trials, std::uint64_t seed);

}  // namespace attn::eval
