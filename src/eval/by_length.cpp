#include "attn/eval/by_length.h"

#include "attn/core/error.h"
#include "attn/eval/python_text.h"

namespace attn::eval {

std::vector<std::int64_t> word_counts(std::span<const std::string> lines) {
  std::vector<std::int64_t> words;
  for (const std::string& line : lines) words.push_back(static_cast<std::int64_t>(python_split(line).size()));
  return words;
}

std::vector<LengthBucket> bucket_by_reference_length(std::span<const std::string> first_reference) {
  return bucket_by_word_count(word_counts(first_reference));
}

std::vector<LengthBucket> bucket_by_word_count(std::span<const std::int64_t> reference_words) {
  std::vector<LengthBucket> buckets = {
      {"1-10", 1, 10, {}, 0},   {"11-20", 11, 20, {}, 0}, {"21-30", 21, 30, {}, 0},
      {"31-40", 31, 40, {}, 0}, {"41-60", 41, 60, {}, 0}, {"61+", 61, -1, {}, 0},
  };
  for (std::size_t i = 0; i < reference_words.size(); ++i) {
    const std::int64_t words = reference_words[i];
    LengthBucket* home = &buckets.front();
    for (LengthBucket& bucket : buckets)
      if (words >= bucket.min_words && (bucket.max_words < 0 || words <= bucket.max_words)) home = &bucket;
    home->segments.push_back(i);
    home->words += words;
  }
  return buckets;
}

std::optional<double> bucket_score(const LengthBucket& bucket, const SegmentStats& stats, const ScoreFromStats& score) {
  if (bucket.segments.empty()) return std::nullopt;
  std::vector<double> summed(stats.fields, 0.0);
  for (std::size_t segment : bucket.segments) {
    require(segment < stats.segments(), "a length bucket names a segment past the statistics");
    const std::span<const double> row = stats.row(segment);
    for (std::size_t f = 0; f < stats.fields; ++f) summed[f] += row[f];
  }
  return score(summed);
}

}  // namespace attn::eval
