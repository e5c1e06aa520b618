#include "attn/train/joined_pairs.h"

#include <algorithm>

#include "attn/core/rng.h"

namespace attn::train {

namespace {
// Not plan_batches' stream of the same epoch: the sizes and the batch order are independent draws.
constexpr std::uint64_t kJoinStream = 0x6a6f696e70616972ull;  // "joinpair"
// The coins for dropped stops: their own stream, so the option changes sources and never the groups.
constexpr std::uint64_t kStopStream = 0x64726f7073746f70ull;  // "dropstop"

bool fits(const Example& group, const Example& next, std::int64_t max_len) {
  if (max_len <= 0) return true;
  return static_cast<std::int64_t>(group.src.size() + next.src.size()) <= max_len &&
         static_cast<std::int64_t>(group.tgt.size() + next.tgt.size()) <= max_len;
}
}  // namespace

std::vector<Example> join_pairs(const EncodedCorpus& corpus, const EpochShape& shape, std::uint64_t seed,
                                std::int64_t epoch) {
  if (!shape.reshapes()) return corpus.examples;
  const std::uint64_t seed_epoch = seed * 1000003u + static_cast<std::uint64_t>(epoch);
  Rng rng(seed_epoch ^ kJoinStream), coins(seed_epoch ^ kStopStream);
  std::vector<Example> joined;
  const std::size_t n = corpus.examples.size();
  std::size_t i = 0;
  while (i < n) {
    const auto size = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(shape.max_pairs)));
    Example group = corpus.examples[i];
    std::size_t next = i + 1;
    for (std::int64_t taken = 1; taken < size && next < n; ++taken, ++next) {
      const Example& e = corpus.examples[next];
      if (corpus.line[next] != corpus.line[next - 1] + 1 || !fits(group, e, shape.max_len)) break;
      group.src.insert(group.src.end(), e.src.begin(), e.src.end());
      group.tgt.insert(group.tgt.end(), e.tgt.begin(), e.tgt.end());
    }
    // A source that is nothing but stops keeps them: an empty side is no example.
    if (shape.drop_final_stop > 0.0 && coins.uniform() < shape.drop_final_stop) {
      std::vector<std::int32_t> src = group.src;
      if (drop_final_stop(src, shape.stop_ids) && !src.empty()) group.src = std::move(src);
    }
    joined.push_back(std::move(group));
    i = next;
  }
  return joined;
}

std::vector<std::int32_t> final_stop_ids(const text::Bpe& bpe) {
  std::vector<std::int32_t> ids;
  for (const char stop : {'.', '!', '?'}) {
    const std::string piece(1, stop);
    for (const std::string& p : {piece, std::string(text::kWordMarkerText) + piece})
      if (bpe.vocab().contains(p)) ids.push_back(bpe.vocab().id(p));
    ids.push_back(text::Vocab::byte_id(static_cast<std::uint8_t>(stop)));
  }
  return ids;
}

bool drop_final_stop(std::vector<std::int32_t>& src, std::span<const std::int32_t> stop_ids) {
  const std::size_t size = src.size();
  while (!src.empty() && std::find(stop_ids.begin(), stop_ids.end(), src.back()) != stop_ids.end()) src.pop_back();
  if (src.size() == size) return false;
  if (!src.empty() && src.back() == text::kWordMarker) src.pop_back();  // "Hut ." encoded as "▁" "."
  return true;
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
