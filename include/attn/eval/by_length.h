// Scores per bucket of reference length, to see where a system loses: the
// segments are grouped by the word count (whitespace split) of their first
// reference into 1–10, 11–20, 21–30, 31–40, 41–60 and 61+ words (an empty
// reference counts in the first bucket), and each metric is computed on each
// group's summed statistics as a corpus of its own.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attn/eval/significance.h"

namespace attn::eval {

struct LengthBucket {
  std::string label;  // "1-10", ..., "61+"
  int min_words = 0;
  int max_words = 0;                  // inclusive; -1: no upper bound
  std::vector<std::size_t> segments;  // line indices, ascending
  std::int64_t words = 0;             // reference words in the bucket
};

// The six buckets (all present, possibly empty) for the first reference stream.
std::vector<LengthBucket> bucket_by_reference_length(std::span<const std::string> first_reference);
// Each line's word count (Python's split()), as the buckets count them.
std::vector<std::int64_t> word_counts(std::span<const std::string> lines);
// The same buckets from each segment's reference word count.
std::vector<LengthBucket> bucket_by_word_count(std::span<const std::int64_t> reference_words);

// The corpus score of the bucket's segments; nullopt when it has none.
std::optional<double> bucket_score(const LengthBucket& bucket, const SegmentStats& stats, const ScoreFromStats& score);

}  // namespace attn::eval
