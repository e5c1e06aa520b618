// Paired significance tests. The draws are checked against the numbers
// NumPy's documentation prints for default_rng(12345); the tests' logic
// against properties sacreBLEU's definitions imply (its own published
// p-values need the WMT17 systems, see tools/sacrebleu_ref.py wmt17).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/eval/corpus_metric.h"
#include "attn/eval/numpy_random.h"
#include "attn/eval/significance.h"

using namespace attn::eval;
using Lines = std::vector<std::string>;

TEST_CASE("NumPy's default_rng(12345) stream is reproduced bit for bit", "[eval][significance]") {
  // numpy.random.default_rng(12345).random(3), from NumPy's documentation.
  NumpyPcg64 floats(12345);
  CHECK(floats.next_double() == 0.22733602246716966);
  CHECK(floats.next_double() == 0.31675833970975287);
  CHECK(floats.next_double() == 0.7973654573327341);
  // default_rng(12345).integers(low=0, high=10, size=3) == [6, 2, 7] (NumPy's documentation).
  const std::vector<std::uint32_t> first = bootstrap_indices(10, 1, 12345);
  CHECK(std::vector<std::uint32_t>(first.begin(), first.begin() + 3) == std::vector<std::uint32_t>{6, 2, 7});
}

TEST_CASE("draws are deterministic per seed, in range, and coin flips are balanced", "[eval][significance]") {
  const auto a = bootstrap_indices(37, 50, 7), b = bootstrap_indices(37, 50, 7), c = bootstrap_indices(37, 50, 8);
  CHECK(a == b);
  CHECK(a != c);
  for (std::uint32_t index : a) CHECK(index < 37);
  const auto flips = coin_flips(100, 100, 12345);
  std::size_t ones = 0;
  for (std::uint8_t flip : flips) ones += flip;
  CHECK(ones > 4700);
  CHECK(ones < 5300);
  CHECK(bootstrap_indices(1, 5, 1) == std::vector<std::uint32_t>(5, 0));
}

TEST_CASE("estimate_ci takes sacreBLEU's percentiles and mean", "[eval][significance]") {
  std::vector<double> scores;
  for (int i = 80; i >= 1; --i) scores.push_back(i);  // 1..80, unsorted
  const ConfidenceInterval ci = estimate_ci(scores);
  CHECK(ci.low == 3.0);    // sorted[80 / 40]
  CHECK(ci.high == 78.0);  // sorted[80 - 2 - 1]
  CHECK(ci.half_width == 37.5);
  CHECK(ci.mean == 40.5);
}

namespace {

// A small corpus: the reference, a close system and a poor one.
const Lines kRefs = {"the cat sat on the mat",     "a dog barks at night",       "birds fly south in winter",
                     "she reads a long book",      "we walk to the old park",    "rain falls on the green hills",
                     "he plays the piano well",    "they cook fresh fish today", "the sun rises in the east",
                     "children laugh in the yard", "my friend lives far away",   "the river runs to the sea"};
const Lines kClose = {"the cat sat on a mat",   "a dog barks at night", "birds fly south in the winter",
                      "she reads a book",       "we walk to the park",  "rain falls on green hills",
                      "he plays piano well",    "they cook fish today", "the sun rises in east",
                      "children laugh in yard", "my friend lives away", "the river runs to sea"};
const Lines kPoor = {"cat mat", "dog night", "birds winter", "book", "park walk", "hills rain",
                     "piano",   "fish",      "sun east",     "yard", "friend",    "river sea"};

SegmentStats stats_of(const CorpusMetric& metric, const Lines& hyps) {
  const std::vector<Lines> refs = {kRefs};
  return metric.corpus_stats(hyps, refs);
}

}  // namespace

TEST_CASE("a system against itself: sacreBLEU's smallest p and a zero difference", "[eval][significance]") {
  for (const CorpusMetric& metric : {bleu_metric({}), chrf_metric({}), ter_metric({})}) {
    INFO(metric.name);
    const SegmentStats close = stats_of(metric, kClose);
    const PairedResult bs = paired_bootstrap(close, close, metric.score, 200, 12345);
    CHECK(bs.p_value == 1.0 / 201);  // no resampled difference exceeds the real one, 0
    REQUIRE(bs.diff_ci);
    CHECK(bs.diff_ci->low <= 0.0);
    CHECK(bs.diff_ci->high >= 0.0);
    const PairedResult ar = paired_approximate_randomization(close, close, metric.score, 300, 12345);
    CHECK(ar.p_value == 1.0 / 301);
    CHECK(ar.score == bs.score);
  }
}

TEST_CASE("the reference as a system differs from a poor one with p < 0.01", "[eval][significance]") {
  for (const CorpusMetric& metric : {bleu_metric({}), chrf_metric({}), ter_metric({})}) {
    INFO(metric.name);
    const SegmentStats poor = stats_of(metric, kPoor), perfect = stats_of(metric, kRefs);
    const PairedResult bs = paired_bootstrap(poor, perfect, metric.score, 1000, 12345);
    CHECK(bs.p_value < 0.01);
    CHECK(bs.score == Approx(metric.name == "TER" ? 0.0 : 100.0).margin(1e-9));
    REQUIRE(bs.ci);
    CHECK(bs.ci->half_width == 0.0);  // every resample of a perfect system is perfect
    const PairedResult ar = paired_approximate_randomization(poor, perfect, metric.score, 1000, 12345);
    CHECK(ar.p_value < 0.01);
  }
}

TEST_CASE("bootstrap CIs hold the corpus score and the baseline row uses the same draws", "[eval][significance]") {
  const CorpusMetric bleu = bleu_metric({});
  const SegmentStats close = stats_of(bleu, kClose), poor = stats_of(bleu, kPoor);
  const auto indices = bootstrap_indices(kRefs.size(), 500, 12345);
  const PairedResult baseline = bootstrap_baseline(poor, bleu.score, indices);
  const PairedResult system = paired_bootstrap(poor, close, bleu.score, indices);
  REQUIRE(baseline.ci);
  REQUIRE(system.ci);
  CHECK(baseline.ci->low <= baseline.score);
  CHECK(baseline.score <= baseline.ci->high);
  CHECK(system.ci->low <= system.score);
  CHECK(system.score <= system.ci->high);
  CHECK(system.diff_ci->low > 0.0);  // the close system is better in (almost) every resample
  const PairedResult again = paired_bootstrap(poor, close, bleu.score, 500, 12345);
  CHECK(again.p_value == system.p_value);
  CHECK(again.ci->mean == system.ci->mean);
}
