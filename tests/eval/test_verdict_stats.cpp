// The statistics behind attn report --claims, against known values: printed
// t tables and closed forms of the t distribution and the incomplete beta,
// Holm on a worked vector, the paired t and its TOST on hand-worked
// differences, the percentile-bootstrap TOST, least squares, and CPython's
// random.Random draws (the values Python 3.11 prints).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "attn/core/error.h"
#include "attn/eval/holm.h"
#include "attn/eval/paired_t.h"
#include "attn/eval/python_random.h"
#include "attn/eval/significance.h"
#include "attn/eval/student_t.h"

using namespace attn::eval;

namespace {
const double kPi = std::acos(-1.0);
// P(T >= t) for 2 degrees of freedom, in closed form: (1 − t/√(t² + 2))/2.
double upper_tail_df2(double t) { return (1.0 - t / std::sqrt(t * t + 2.0)) / 2.0; }
}  // namespace

TEST_CASE("verdict stats: the regularized incomplete beta against its closed forms", "[verdicts][eval]") {
  for (double x : {0.01, 0.2, 0.5, 0.7, 0.99})
    for (double a : {0.5, 1.0, 2.5, 7.0}) {
      INFO("x = " << x << ", a = " << a);
      // I_x(a, 1) = x^a and I_x(1, b) = 1 − (1 − x)^b, on both sides of the fraction's switch point.
      CHECK(regularized_beta(x, a, 1.0) == Approx(std::pow(x, a)).margin(1e-13));
      CHECK(regularized_beta(x, 1.0, a) == Approx(1.0 - std::pow(1.0 - x, a)).margin(1e-13));
    }
  for (double x : {0.1, 0.5, 0.9})  // I_x(1/2, 1/2) = (2/π) asin √x: neither parameter is 1
    CHECK(regularized_beta(x, 0.5, 0.5) == Approx(2.0 / kPi * std::asin(std::sqrt(x))).margin(1e-13));
  CHECK(regularized_beta(0.3, 2.0, 5.0) == Approx(1.0 - regularized_beta(0.7, 5.0, 2.0)).margin(1e-14));
  CHECK(regularized_beta(0.0, 2.0, 3.0) == 0.0);
  CHECK(regularized_beta(1.0, 2.0, 3.0) == 1.0);
  CHECK_THROWS_AS(regularized_beta(1.5, 2.0, 3.0), attn::Error);
  CHECK_THROWS_AS(regularized_beta(0.5, 0.0, 3.0), attn::Error);
}

TEST_CASE("verdict stats: Student t against printed tables and closed forms", "[verdicts][eval]") {
  // Two-sided 5% points: 12.706 (1 df), 4.303 (2), 3.182 (3), 2.776 (4), 2.228 (10); 1% with 2 df: 9.925.
  // The tables round t to 3 decimals, hence the tolerance on p.
  struct Row {
    double t, df, p;
  };
  for (const Row& r : {Row{12.706, 1, 0.05}, Row{4.303, 2, 0.05}, Row{3.182, 3, 0.05}, Row{2.776, 4, 0.05},
                       Row{2.228, 10, 0.05}, Row{9.925, 2, 0.01}}) {
    INFO("t = " << r.t << ", df = " << r.df);
    CHECK(student_t_two_sided_p(r.t, r.df) == Approx(r.p).margin(2e-4));
    CHECK(student_t_quantile(1.0 - r.p / 2.0, r.df) == Approx(r.t).margin(5e-4));
  }
  // With 2 df the quantile has a closed form: 1 − t/√(t² + 2) = 0.05 gives t = √(2/(1/0.95² − 1)).
  const double t2 = std::sqrt(2.0 / (1.0 / (0.95 * 0.95) - 1.0));
  CHECK(student_t_quantile(0.975, 2) == Approx(t2).epsilon(1e-12));
  CHECK(student_t_quantile(0.025, 2) == Approx(-t2).epsilon(1e-12));
  CHECK(student_t_quantile(0.975, 4) == Approx(2.776445).margin(1e-6));  // R: qt(0.975, 4)
  CHECK(student_t_quantile(0.5, 7) == 0.0);
  for (double t : {0.0, 0.3, 1.0, 2.5, 6.0, 40.0})
    for (double sign : {1.0, -1.0}) {
      INFO("t = " << sign * t);
      // 1 df is Cauchy: p = 1 − (2/π) atan|t|; 2 df: p = 1 − |t|/√(t² + 2).
      CHECK(student_t_two_sided_p(sign * t, 1) == Approx(1.0 - 2.0 / kPi * std::atan(t)).margin(1e-13));
      CHECK(student_t_two_sided_p(sign * t, 2) == Approx(1.0 - t / std::sqrt(t * t + 2.0)).margin(1e-13));
      CHECK(student_t_cdf(sign * t, 2) == Approx(sign > 0 ? 1.0 - upper_tail_df2(t) : upper_tail_df2(t)).margin(1e-13));
    }
  // Many degrees of freedom: the standard normal, p = erfc(|t|/√2).
  for (double t : {1.0, 1.96, 3.0})
    CHECK(student_t_two_sided_p(t, 1e7) == Approx(std::erfc(t / std::sqrt(2.0))).margin(1e-5));
  CHECK(student_t_two_sided_p(std::numeric_limits<double>::infinity(), 2) == 0.0);
  CHECK_THROWS_AS(student_t_two_sided_p(1.0, 0.0), attn::Error);
  CHECK_THROWS_AS(student_t_quantile(1.0, 2.0), attn::Error);
}

TEST_CASE("verdict stats: Holm on a worked vector, with missing tests and the cap", "[verdicts][eval]") {
  // p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04,
  // raised to 0.06 (an adjusted p never falls below that of a smaller raw p).
  const std::vector<std::optional<double>> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<std::optional<double>> h = holm(p);
  REQUIRE(h.size() == 4);
  CHECK(*h[0] == Approx(0.03).margin(1e-15));
  CHECK(*h[1] == Approx(0.06).margin(1e-15));
  CHECK(*h[2] == Approx(0.06).margin(1e-15));
  CHECK(*h[3] == Approx(0.02).margin(1e-15));
  // nullopt is outside the family (m = 2), and nothing exceeds 1.
  const std::vector<std::optional<double>> gaps{0.02, std::nullopt, 0.6};
  const std::vector<std::optional<double>> g = holm(gaps);
  CHECK(*g[0] == Approx(0.04).margin(1e-15));
  CHECK_FALSE(g[1].has_value());
  CHECK(*g[2] == Approx(0.6).margin(1e-15));
  const std::vector<std::optional<double>> big{0.5, 0.9, 0.7};
  for (const auto& x : holm(big)) CHECK(*x == 1.0);
  CHECK(holm(std::vector<std::optional<double>>{}).empty());
}

TEST_CASE("verdict stats: the paired t and its two one-sided tests on hand-worked differences", "[verdicts][eval]") {
  // 1, 2, 3: mean 2, sd 1, t = 2/(1/√3) = 2√3 with 2 df, p = 1 − 2√3/√14.
  const std::vector<double> d{1.0, 2.0, 3.0};
  const auto t = paired_t(d);
  REQUIRE(t);
  CHECK(t->mean == 2.0);
  CHECK(t->sd == Approx(1.0).epsilon(1e-15));
  CHECK(t->df == 2.0);
  CHECK(t->t == Approx(2.0 * std::sqrt(3.0)).epsilon(1e-14));
  CHECK(t->p == Approx(1.0 - 2.0 * std::sqrt(3.0) / std::sqrt(14.0)).margin(1e-14));
  const std::vector<double> negative{-1.0, -2.0, -3.0}, one{1.5}, flat{0.5, 0.5, 0.5}, zero{0.0, 0.0};
  CHECK(paired_t(negative)->t < 0.0);
  CHECK_FALSE(paired_t(one));       // one seed: no test
  CHECK(paired_t(flat)->p == 0.0);  // no spread, nonzero mean
  CHECK(paired_t(zero)->p == 1.0);  // identical outputs

  // TOST, margin 0.5, differences 0.1, 0.2, 0.3: mean 0.2, se = 0.1/√3;
  // p_lower = P(T >= 0.7/se), p_upper = P(T <= −0.3/se) = P(T >= 0.3/se) with 2 df.
  const std::vector<double> near{0.1, 0.2, 0.3};
  const auto e = paired_t_equivalence(near, 0.5);
  REQUIRE(e);
  const double se = 0.1 / std::sqrt(3.0);
  CHECK(e->p_lower == Approx(upper_tail_df2(0.7 / se)).margin(1e-12));
  CHECK(e->p_upper == Approx(upper_tail_df2(0.3 / se)).margin(1e-12));
  CHECK(e->p() == e->p_upper);
  CHECK(e->p() < 0.05);  // 0.3/se = 5.2 > 2.92, the one-sided 5% point of t(2)
  // Outside the margin the TOST cannot reject: p >= 1/2 on the far side.
  const std::vector<double> far{0.9, 1.0, 1.1};
  CHECK(paired_t_equivalence(far, 0.5)->p() > 0.5);
  // No spread: inside the margin p 0, outside 1.
  CHECK(paired_t_equivalence(flat, 1.0)->p() == 0.0);
  CHECK(paired_t_equivalence(flat, 0.25)->p() == 1.0);
  CHECK_FALSE(paired_t_equivalence(one, 0.5));
  CHECK_THROWS_AS(paired_t_equivalence(near, 0.0), attn::Error);
}

TEST_CASE("verdict stats: bootstrap p-values, centred and one-sided (TOST)", "[verdicts][eval]") {
  // sacreBLEU's rule: |Δ*| = 1, 2, 3, 6 (mean 3) centred to −2, −1, 0, 3; only 3 exceeds a real |Δ| of 2.5:
  // p = (1 + 1)/(4 + 1).
  const std::vector<double> resampled{1.0, -2.0, 3.0, 6.0};
  CHECK(centred_bootstrap_p(resampled, -2.5) == Approx(0.4).epsilon(1e-15));
  // TOST, margin 0.5: one resample <= −0.5, two >= 0.5 of five: p_lower 2/6, p_upper 3/6.
  const std::vector<double> d{-0.6, -0.2, 0.1, 0.5, 0.7};
  const Equivalence e = bootstrap_equivalence(d, 0.5);
  CHECK(e.p_lower == Approx(2.0 / 6.0).epsilon(1e-15));
  CHECK(e.p_upper == Approx(3.0 / 6.0).epsilon(1e-15));
  CHECK(e.p() == e.p_upper);
  // All inside: the floor 1/(B + 1).
  const std::vector<double> inside(999, 0.1);
  CHECK(bootstrap_equivalence(inside, 0.5).p() == Approx(0.001).epsilon(1e-15));
}

TEST_CASE("verdict stats: the least-squares slope of BLEU against k", "[verdicts][eval]") {
  // x = 1, 2, 4, 6, 8 (mean 4.2, Sxx = 32.8), y = 10, 6, 3, 1, 0 (mean 4): Sxy = −44.
  const std::vector<double> k{1, 2, 4, 6, 8}, y{10, 6, 3, 1, 0}, line{1, -1, -5, -9, -13};
  CHECK(least_squares_slope(k, y) == Approx(-44.0 / 32.8).epsilon(1e-14));
  CHECK(least_squares_slope(k, line) == Approx(-2.0).epsilon(1e-14));
  const std::vector<double> one{1}, same{2, 2}, two{1, 3};
  CHECK_THROWS_AS(least_squares_slope(one, one), attn::Error);
  CHECK_THROWS_AS(least_squares_slope(same, two), attn::Error);
}

TEST_CASE("verdict stats: CPython's random.Random draws, bit for bit", "[verdicts][eval]") {
  // python3 -c "import random; r = random.Random(12345); print([r.getrandbits(32) for _ in range(3)])"
  PythonRandom bits(12345);
  CHECK(bits.next_uint32() == 1789368711u);
  CHECK(bits.next_uint32() == 3146859322u);
  CHECK(bits.next_uint32() == 43676229u);
  // [r.randrange(42) for _ in range(10)] for Random(12345): the slope bootstrap's first draws.
  PythonRandom groups(12345);
  std::vector<std::uint32_t> drawn;
  for (int i = 0; i < 10; ++i) drawn.push_back(groups.randrange(42));
  CHECK(drawn == std::vector<std::uint32_t>{26, 0, 19, 23, 12, 17, 36, 27, 10, 23});
  // A seed above 2^32 (two key words) and seed 0.
  PythonRandom wide((std::uint64_t{1} << 40) + 7);
  std::vector<std::uint32_t> w;
  for (int i = 0; i < 5; ++i) w.push_back(wide.randrange(1000));
  CHECK(w == std::vector<std::uint32_t>{628, 765, 834, 960, 967});
  PythonRandom zero(0);
  std::vector<std::uint32_t> z;
  for (int i = 0; i < 5; ++i) z.push_back(zero.randrange(5));
  CHECK(z == std::vector<std::uint32_t>{3, 3, 0, 2, 4});
}
