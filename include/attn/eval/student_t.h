// Student's t distribution, exactly (no table, no normal approximation), for
// the paired t-test over seeds: with three seeds the test has 2 degrees of
// freedom, where the normal law would understate the tails many times over.
// Through the regularized incomplete beta function:
//   P(|T| >= |t|) = I_{df/(df + t²)}(df/2, 1/2).
#pragma once

namespace attn::eval {

// I_x(a, b) for 0 <= x <= 1 and a, b > 0 (continued fraction, modified
// Lentz; above (a + 1)/(a + b + 2) through I_x(a, b) = 1 − I_{1−x}(b, a)).
// Throws Error outside that domain.
double regularized_beta(double x, double a, double b);

// P(T <= t) for T ~ Student t with df > 0 degrees of freedom (t may be ±inf).
double student_t_cdf(double t, double df);

// P(|T| >= |t|): the two-sided p-value of t.
double student_t_two_sided_p(double t, double df);

// The t with P(T <= t) = probability, 0 < probability < 1 (bisection on the
// CDF to the last bit).
double student_t_quantile(double probability, double df);

}  // namespace attn::eval
