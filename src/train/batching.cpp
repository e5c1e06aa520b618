#include "attn/train/batching.h"

#include <algorithm>
#include <numeric>

#include "attn/core/rng.h"

namespace attn::train {

namespace {
// Padded tokens per sentence on the longer side (+1 for </s> or <s> on the target).
std::int64_t cost(const Example& e) {
  return std::max<std::int64_t>(static_cast<std::int64_t>(e.src.size()), static_cast<std::int64_t>(e.tgt.size()) + 1);
}

template <typename T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}
}  // namespace

std::vector<BatchIndices> plan_batches(const std::vector<Example>& examples, std::int64_t max_tokens,
                                       std::uint64_t seed, std::int64_t epoch, bool shuffle_batches) {
  std::vector<std::int64_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed * 1000003u + static_cast<std::uint64_t>(epoch));
  if (shuffle_batches) shuffle(order, rng);  // random order among equal lengths
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const Example &x = examples[a], &y = examples[b];
    if (x.tgt.size() != y.tgt.size()) return x.tgt.size() < y.tgt.size();
    return x.src.size() < y.src.size();
  });
  std::vector<BatchIndices> batches;
  BatchIndices current;
  std::int64_t longest = 0;
  for (std::int64_t i : order) {
    const std::int64_t c = cost(examples[i]);
    const std::int64_t longer = std::max(longest, c);
    if (!current.empty() && longer * static_cast<std::int64_t>(current.size() + 1) > max_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(i);
    longest = std::max(longest, c);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  if (shuffle_batches) shuffle(batches, rng);
  return batches;
}

model::Batch gather_batch(const std::vector<Example>& examples, const BatchIndices& indices) {
  std::vector<std::vector<std::int32_t>> src, tgt;
  src.reserve(indices.size());
  tgt.reserve(indices.size());
  for (std::int64_t i : indices) {
    src.push_back(examples[i].src);
    tgt.push_back(examples[i].tgt);
  }
  return model::make_batch(src, tgt);
}

}  // namespace attn::train
