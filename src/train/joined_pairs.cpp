#include "attn/train/joined_pairs.h"

#include "attn/core/rng.h"

namespace attn::train {

namespace {
// Not plan_batches' stream of the same epoch: the sizes and the batch order are independent draws.
constexpr std::uint64_t kJoinStream = 0x6a6f696e70616972ull;  // "joinpair"

bool fits(const Example& group, const Example& next, std::int64_t max_len) {
  if (max_len <= 0) return true;
  return static_cast<std::int64_t>(group.src.size() + next.src.size()) <= max_len &&
         static_cast<std::int64_t>(group.tgt.size() + next.tgt.size()) <= max_len;
}
}  // namespace

std::vector<Example> join_pairs(const EncodedCorpus& corpus, std::int64_t max_pairs, std::int64_t max_len,
                                std::uint64_t seed, std::int64_t epoch) {
  if (max_pairs <= 1) return corpus.examples;
  Rng rng((seed * 1000003u + static_cast<std::uint64_t>(epoch)) ^ kJoinStream);
  std::vector<Example> joined;
  const std::size_t n = corpus.examples.size();
  std::size_t i = 0;
  while (i < n) {
    const auto size = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_pairs)));
    Example group = corpus.examples[i];
    std::size_t next = i + 1;
    for (std::int64_t taken = 1; taken < size && next < n; ++taken, ++next) {
      const Example& e = corpus.examples[next];
      if (corpus.line[next] != corpus.line[next - 1] + 1 || !fits(group, e, max_len)) break;
      group.src.insert(group.src.end(), e.src.begin(), e.src.end());
      group.tgt.insert(group.tgt.end(), e.tgt.begin(), e.tgt.end());
    }
    joined.push_back(std::move(group));
    i = next;
  }
  return joined;
}

ParallelText join_lines(const ParallelText& text, std::int64_t k) {
  ParallelText joined;
  const auto group = static_cast<std::size_t>(k);
  for (std::size_t first = 0; first + group <= text.src.size(); first += group) {
    std::string src = text.src[first], tgt = text.tgt[first];
    for (std::size_t j = first + 1; j < first + group; ++j) {
      src += ' ' + text.src[j];
      tgt += ' ' + text.tgt[j];
    }
    joined.src.push_back(std::move(src));
    joined.tgt.push_back(std::move(tgt));
  }
  return joined;
}

}  // namespace attn::train
