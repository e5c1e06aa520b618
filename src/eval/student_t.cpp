#include "attn/eval/student_t.h"

#include <cmath>
#include <limits>
#include <string>

#include "attn/core/error.h"

namespace attn::eval {

namespace {

// The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified
// Lentz); it converges fast for x < (a + 1)/(a + b + 2).
double beta_continued_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300, kEps = 1e-16;
  constexpr int kMaxTerms = 10000;
  const auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  double c = 1.0, d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double h = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 / guard(1.0 + even * d);
    c = guard(1.0 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 / guard(1.0 + odd * d);
    c = guard(1.0 + odd / c);
    h *= d * c;
    if (std::abs(d * c - 1.0) < kEps) return h;
  }
  throw Error("regularized_beta: no convergence for x = " + std::to_string(x) + ", a = " + std::to_string(a) +
              ", b = " + std::to_string(b));
}

}  // namespace

double regularized_beta(double x, double a, double b) {
  require(x >= 0.0 && x <= 1.0 && a > 0.0 && b > 0.0,
          "regularized_beta: needs 0 <= x <= 1 and a, b > 0 (got x = " + std::to_string(x) +
              ", a = " + std::to_string(a) + ", b = " + std::to_string(b) + ")");
  if (x == 0.0 || x == 1.0) return x;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(1.0 - x, b, a) / b;
}

double student_t_two_sided_p(double t, double df) {
  require(df > 0.0, "student_t: the degrees of freedom must be positive (got " + std::to_string(df) + ")");
  if (std::isnan(t)) throw Error("student_t: t is not a number");
  if (std::isinf(t)) return 0.0;
  return regularized_beta(df / (df + t * t), df / 2.0, 0.5);
}

double student_t_cdf(double t, double df) {
  const double tail = student_t_two_sided_p(t, df) / 2.0;  // P(T >= |t|)
  return t < 0.0 ? tail : 1.0 - tail;
}

double student_t_quantile(double probability, double df) {
  require(probability > 0.0 && probability < 1.0,
          "student_t_quantile: the probability must lie strictly between 0 and 1 (got " + std::to_string(probability) +
              ")");
  if (probability == 0.5) return 0.0;
  // Symmetric: find the upper quantile of the larger probability, then mirror.
  const double upper = std::max(probability, 1.0 - probability);
  double lo = 0.0, hi = 1.0;
  while (student_t_cdf(hi, df) < upper) {
    hi *= 2.0;
    if (std::isinf(hi)) return probability > 0.5 ? hi : -hi;
  }
  for (int i = 0; i < 200 && hi - lo > std::numeric_limits<double>::epsilon() * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < upper ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  return probability > 0.5 ? t : -t;
}

}  // namespace attn::eval
