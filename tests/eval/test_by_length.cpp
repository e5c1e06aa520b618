// Length buckets: boundaries, counts, and scores of a bucket equal to the
// corpus score of its segments alone.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/eval/by_length.h"
#include "attn/eval/corpus_metric.h"

using namespace attn::eval;

namespace {

std::string words(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += (i > 0 ? " w" : "w") + std::to_string(i);
  return text;
}

}  // namespace

TEST_CASE("segments go to the bucket of their first reference's word count", "[eval][by_length]") {
  const std::vector<std::string> refs = {words(1),  words(10), words(11), words(20), words(21),  words(30), words(31),
                                         words(40), words(41), words(60), words(61), words(200), ""};
  const auto buckets = bucket_by_reference_length(refs);
  REQUIRE(buckets.size() == 6);
  CHECK(buckets[0].label == "1-10");
  CHECK(buckets[0].segments == std::vector<std::size_t>{0, 1, 12});  // an empty reference counts as short
  CHECK(buckets[0].words == 11);
  CHECK(buckets[1].segments == std::vector<std::size_t>{2, 3});
  CHECK(buckets[2].segments == std::vector<std::size_t>{4, 5});
  CHECK(buckets[3].segments == std::vector<std::size_t>{6, 7});
  CHECK(buckets[4].segments == std::vector<std::size_t>{8, 9});
  CHECK(buckets[5].label == "61+");
  CHECK(buckets[5].segments == std::vector<std::size_t>{10, 11});
  CHECK(buckets[5].words == 261);
}

TEST_CASE("a bucket's score is the corpus score of its segments alone", "[eval][by_length]") {
  const std::vector<std::string> refs = {"a b c", words(15), "d e f g"};
  const std::vector<std::string> hyps = {"a b x", words(14), "d e f g"};
  const CorpusMetric bleu = bleu_metric({});
  const std::vector<std::vector<std::string>> streams = {refs};
  const SegmentStats stats = bleu.corpus_stats(hyps, streams);
  const auto buckets = bucket_by_reference_length(refs);
  const std::vector<std::string> short_hyps = {"a b x", "d e f g"};
  const std::vector<std::vector<std::string>> short_refs = {{"a b c", "d e f g"}};
  CHECK(bucket_score(buckets[0], stats, bleu.score) == Bleu().corpus_score(short_hyps, short_refs).score);
  CHECK(!bucket_score(buckets[3], stats, bleu.score).has_value());
}
