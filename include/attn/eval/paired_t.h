// Tests of differences measured once per training seed (arch A's score − arch
// B's score, same seed): the paired t-test, and the two one-sided tests
// (TOST) that decide equivalence within a margin. They measure the training
// runs' variance, which a bootstrap over test sentences cannot see.
#pragma once
#include <cstddef>
#include <optional>
#include <span>

namespace attn::eval {

struct PairedT {
  std::size_t n = 0;
  double mean = 0.0;
  double sd = 0.0;  // sample sd (n − 1)
  double t = 0.0;   // mean / (sd / √n); ±inf when sd is 0 and the mean is not, 0 when both are
  double df = 0.0;  // n − 1
  double p = 1.0;   // two-sided
};

// The paired t-test of the differences against 0 (Student t with n − 1 df);
// nullopt below two differences.
std::optional<PairedT> paired_t(std::span<const double> differences);

// Two one-sided tests of |δ| < margin: p_lower tests H0 δ <= −margin against
// δ > −margin, p_upper H0 δ >= margin against δ < margin. Equivalence is shown
// at level α when both are below α, i.e. p() = max of the two < α.
struct Equivalence {
  double p_lower = 1.0;
  double p_upper = 1.0;
  double p() const { return p_lower > p_upper ? p_lower : p_upper; }
};

// TOST with Student t over the per-seed differences: t_lower = (mean + margin)/se,
// p_lower = P(T >= t_lower); t_upper = (mean − margin)/se, p_upper = P(T <= t_upper).
// With no spread (se 0) a bound the mean lies strictly inside is p 0, else 1.
// nullopt below two differences; margin must be positive.
std::optional<Equivalence> paired_t_equivalence(std::span<const double> differences, double margin);

// TOST on a bootstrap's resampled differences (the percentile bootstrap):
// p_lower = (#{Δ* <= −margin} + 1)/(B + 1), p_upper = (#{Δ* >= margin} + 1)/(B + 1),
// the same (c + 1)/(B + 1) count as sacreBLEU's p, so 1/(B + 1) is the floor.
Equivalence bootstrap_equivalence(std::span<const double> resampled_differences, double margin);

// The least-squares slope of y against x (two or more points, not all x equal).
double least_squares_slope(std::span<const double> x, std::span<const double> y);

}  // namespace attn::eval
