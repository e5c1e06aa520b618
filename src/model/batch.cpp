#include "attn/model/batch.h"

#include <algorithm>
#include <stdexcept>

#include "attn/text/vocab.h"

namespace attn::model {

std::int64_t Batch::target_tokens() const {
  std::int64_t n = 0;
  for (std::int32_t len : tgt_lengths) n += len;
  return n;
}

Batch make_batch(const std::vector<std::vector<std::int32_t>>& sources,
                 const std::vector<std::vector<std::int32_t>>& targets) {
  if (!targets.empty() && targets.size() != sources.size()) throw std::invalid_argument("make_batch: sizes differ");
  Batch b;
  b.size = static_cast<std::int64_t>(sources.size());
  for (const auto& s : sources) b.src_len = std::max<std::int64_t>(b.src_len, static_cast<std::int64_t>(s.size()));
  for (const auto& t : targets) b.tgt_len = std::max<std::int64_t>(b.tgt_len, static_cast<std::int64_t>(t.size()) + 1);
  b.src_len = std::max<std::int64_t>(b.src_len, 1);
  b.src.assign(static_cast<std::size_t>(b.size * b.src_len), text::kPad);
  for (std::int64_t i = 0; i < b.size; ++i) {
    const auto& s = sources[static_cast<std::size_t>(i)];
    std::copy(s.begin(), s.end(), b.src.begin() + i * b.src_len);
    b.src_lengths.push_back(static_cast<std::int32_t>(s.size()));
  }
  if (targets.empty()) return b;
  b.tgt_in.assign(static_cast<std::size_t>(b.size * b.tgt_len), text::kPad);
  b.tgt_out.assign(static_cast<std::size_t>(b.size * b.tgt_len), text::kPad);
  for (std::int64_t i = 0; i < b.size; ++i) {
    const auto& t = targets[static_cast<std::size_t>(i)];
    const std::int64_t n = static_cast<std::int64_t>(t.size());
    b.tgt_in[i * b.tgt_len] = text::kBos;
    for (std::int64_t j = 0; j < n; ++j) {
      b.tgt_in[i * b.tgt_len + j + 1] = t[j];
      b.tgt_out[i * b.tgt_len + j] = t[j];
    }
    b.tgt_out[i * b.tgt_len + n] = text::kEos;
    b.tgt_lengths.push_back(static_cast<std::int32_t>(n + 1));
  }
  return b;
}

}  // namespace attn::model
