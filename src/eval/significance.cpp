#include "attn/eval/significance.h"

#include <algorithm>
#include <cmath>

#include "attn/core/error.h"
#include "attn/eval/numpy_random.h"

namespace attn::eval {
namespace {

// NumPy's pairwise summation (what ndarray.mean() adds with): blocks of at
// most 128 summed with eight running sums, halves above that. The mean then
// matches sacreBLEU's to the last bit.
double pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + static_cast<std::size_t>(j)];
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

double numpy_mean(std::span<const double> values) {
  return pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size());
}

// sacreBLEU's _compute_p_value: (count of statistics > real + 1) / (n + 1).
double p_value(const std::vector<double>& statistics, double real_difference) {
  const auto count =
      std::count_if(statistics.begin(), statistics.end(), [real_difference](double s) { return s > real_difference; });
  return static_cast<double>(count + 1) / static_cast<double>(statistics.size() + 1);
}

void require_paired(const SegmentStats& baseline, const SegmentStats& system) {
  require(baseline.fields == system.fields && baseline.segments() == system.segments(),
          "paired tests need the same segments and statistics for both systems");
  require(baseline.segments() > 0, "paired tests need at least one segment");
}

}  // namespace

void SegmentStats::append(std::span<const double> row) {
  if (fields == 0 && values.empty()) fields = row.size();
  require(row.size() == fields && fields > 0, "every segment needs the same number of statistics");
  values.insert(values.end(), row.begin(), row.end());
}

std::vector<double> SegmentStats::sum() const {
  std::vector<double> total(fields, 0.0);
  for (std::size_t i = 0; i < segments(); ++i)
    for (std::size_t f = 0; f < fields; ++f) total[f] += values[i * fields + f];
  return total;
}

ConfidenceInterval estimate_ci(std::vector<double> scores) {
  require(!scores.empty(), "a confidence interval needs at least one resample");
  std::sort(scores.begin(), scores.end());
  const std::size_t lower = scores.size() / 40;
  const std::size_t upper = scores.size() - lower - 1;
  ConfidenceInterval ci;
  ci.mean = numpy_mean(scores);
  ci.low = scores[lower];
  ci.high = scores[upper];
  ci.half_width = 0.5 * (ci.high - ci.low);
  return ci;
}

double centred_bootstrap_p(std::span<const double> resampled_differences, double real_difference) {
  require(!resampled_differences.empty(), "a bootstrap p-value needs at least one resample");
  std::vector<double> absolute(resampled_differences.size());
  for (std::size_t s = 0; s < absolute.size(); ++s) absolute[s] = std::abs(resampled_differences[s]);
  // Centred: under the null hypothesis the expected difference is zero.
  const double mean = numpy_mean(absolute);
  for (double& d : absolute) d -= mean;
  return p_value(absolute, std::abs(real_difference));
}

std::vector<double> resampled_scores(const SegmentStats& stats, const ScoreFromStats& score,
                                     std::span<const std::uint32_t> indices) {
  const std::size_t n = stats.segments();
  require(n > 0 && indices.size() % n == 0, "resample indices must come in rows of one index per segment");
  std::vector<double> scores;
  scores.reserve(indices.size() / n);
  std::vector<double> summed(stats.fields);
  for (std::size_t start = 0; start < indices.size(); start += n) {
    std::fill(summed.begin(), summed.end(), 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t segment = indices[start + k];
      require(segment < n, "a resample index points past the last segment");
      const std::span<const double> row = stats.row(segment);
      for (std::size_t f = 0; f < stats.fields; ++f) summed[f] += row[f];
    }
    scores.push_back(score(summed));
  }
  return scores;
}

PairedResult bootstrap_baseline(const SegmentStats& baseline, const ScoreFromStats& score,
                                std::span<const std::uint32_t> indices) {
  PairedResult result;
  result.score = score(baseline.sum());
  result.ci = estimate_ci(resampled_scores(baseline, score, indices));
  return result;
}

PairedResult paired_bootstrap(const SegmentStats& baseline, const SegmentStats& system, const ScoreFromStats& score,
                              std::span<const std::uint32_t> indices) {
  require_paired(baseline, system);
  const double baseline_score = score(baseline.sum());
  PairedResult result;
  result.score = score(system.sum());
  const std::vector<double> baseline_scores = resampled_scores(baseline, score, indices);
  const std::vector<double> system_scores = resampled_scores(system, score, indices);
  result.ci = estimate_ci(system_scores);

  std::vector<double> differences(system_scores.size());
  for (std::size_t s = 0; s < system_scores.size(); ++s) differences[s] = system_scores[s] - baseline_scores[s];
  result.diff_ci = estimate_ci(differences);
  result.p_value = centred_bootstrap_p(differences, result.score - baseline_score);
  result.differences = std::move(differences);
  return result;
}

PairedResult paired_bootstrap(const SegmentStats& baseline, const SegmentStats& system, const ScoreFromStats& score,
                              std::size_t samples, std::uint64_t seed) {
  require(samples > 0, "paired bootstrap needs at least one resample");
  return paired_bootstrap(baseline, system, score, bootstrap_indices(baseline.segments(), samples, seed));
}

PairedResult paired_approximate_randomization(const SegmentStats& baseline, const SegmentStats& system,
                                              const ScoreFromStats& score, std::span<const std::uint8_t> flips) {
  require_paired(baseline, system);
  const std::size_t n = baseline.segments(), fields = baseline.fields;
  require(!flips.empty() && flips.size() % n == 0, "coin flips must come in rows of one flip per segment");
  const std::vector<double> baseline_total = baseline.sum(), system_total = system.sum();
  PairedResult result;
  result.score = score(system_total);
  const double real_difference = std::abs(score(baseline_total) - result.score);

  // Pseudo-system A takes the baseline's segment where the flip is 1 and the
  // system's elsewhere, B the other way round: A = system + Σ_flipped (baseline − system).
  std::vector<double> a(fields), b(fields), moved(fields);
  std::vector<double> statistics;
  statistics.reserve(flips.size() / n);
  for (std::size_t start = 0; start < flips.size(); start += n) {
    std::fill(moved.begin(), moved.end(), 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      if (!flips[start + k]) continue;
      const std::span<const double> base_row = baseline.row(k), sys_row = system.row(k);
      for (std::size_t f = 0; f < fields; ++f) moved[f] += base_row[f] - sys_row[f];
    }
    for (std::size_t f = 0; f < fields; ++f) {
      a[f] = system_total[f] + moved[f];
      b[f] = baseline_total[f] - moved[f];
    }
    statistics.push_back(std::abs(score(a) - score(b)));
  }
  result.p_value = p_value(statistics, real_difference);
  return result;
}

PairedResult paired_approximate_randomization(const SegmentStats& baseline, const SegmentStats& system,
                                              const ScoreFromStats& score, std::size_t trials, std::uint64_t seed) {
  require(trials > 0, "approximate randomization needs at least one trial");
  return paired_approximate_randomization(baseline, system, score, coin_flips(baseline.segments(), trials, seed));
}

}  // namespace attn::eval
