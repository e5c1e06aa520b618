#include "attn/eval/paired_t.h"

#include <cmath>
#include <limits>
#include <string>

#include "attn/core/error.h"
#include "attn/eval/student_t.h"

namespace attn::eval {

namespace {

double mean_of(std::span<const double> v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double sample_sd(std::span<const double> v, double mean) {
  double squares = 0.0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(v.size() - 1));
}

// (difference from the bound) / se, with se 0 read as an infinitely sharp estimate.
double t_statistic(double numerator, double se) {
  if (se > 0.0) return numerator / se;
  if (numerator == 0.0) return 0.0;
  return std::copysign(std::numeric_limits<double>::infinity(), numerator);
}

}  // namespace

std::optional<PairedT> paired_t(std::span<const double> differences) {
  if (differences.size() < 2) return std::nullopt;
  PairedT r;
  r.n = differences.size();
  r.mean = mean_of(differences);
  r.sd = sample_sd(differences, r.mean);
  r.df = static_cast<double>(r.n - 1);
  r.t = t_statistic(r.mean, r.sd / std::sqrt(static_cast<double>(r.n)));
  r.p = student_t_two_sided_p(r.t, r.df);
  return r;
}

std::optional<Equivalence> paired_t_equivalence(std::span<const double> differences, double margin) {
  require(margin > 0.0, "an equivalence margin must be positive (got " + std::to_string(margin) + ")");
  if (differences.size() < 2) return std::nullopt;
  const double n = static_cast<double>(differences.size());
  const double mean = mean_of(differences), se = sample_sd(differences, mean) / std::sqrt(n);
  const double t_lower = t_statistic(mean + margin, se), t_upper = t_statistic(mean - margin, se);
  Equivalence e;
  // With se 0 a mean exactly on a bound gives t 0: p 1/2, not evidence either way; read it as 1.
  e.p_lower = se > 0.0 || t_lower != 0.0 ? 1.0 - student_t_cdf(t_lower, n - 1.0) : 1.0;
  e.p_upper = se > 0.0 || t_upper != 0.0 ? student_t_cdf(t_upper, n - 1.0) : 1.0;
  return e;
}

Equivalence bootstrap_equivalence(std::span<const double> resampled_differences, double margin) {
  require(margin > 0.0, "an equivalence margin must be positive (got " + std::to_string(margin) + ")");
  require(!resampled_differences.empty(), "bootstrap_equivalence needs at least one resample");
  std::size_t below = 0, above = 0;
  for (double d : resampled_differences) {
    below += d <= -margin;
    above += d >= margin;
  }
  const double b = static_cast<double>(resampled_differences.size());
  return {(static_cast<double>(below) + 1.0) / (b + 1.0), (static_cast<double>(above) + 1.0) / (b + 1.0)};
}

double least_squares_slope(std::span<const double> x, std::span<const double> y) {
  require(x.size() == y.size() && x.size() >= 2, "least_squares_slope: needs two or more (x, y) pairs");
  const double mx = mean_of(x), my = mean_of(y);
  double sxx = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  require(sxx > 0.0, "least_squares_slope: every x is the same");
  return sxy / sxx;
}

}  // namespace attn::eval
