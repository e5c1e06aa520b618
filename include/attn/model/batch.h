// A batch of sentence pairs as the model consumes it: right-padded token ids
// with per-sequence lengths.
#pragma once
#include <cstdint>
#include <vector>

namespace attn::model {

struct Batch {
  std::int64_t size = 0;                  // B sentences
  std::int64_t src_len = 0;               // Ts, the longest source (padded length)
  std::int64_t tgt_len = 0;               // Tt, the longest target + 1
  std::vector<std::int32_t> src;          // [B, Ts], kPad beyond src_lengths
  std::vector<std::int32_t> src_lengths;  // [B]
  std::vector<std::int32_t> tgt_in;       // [B, Tt]: <s> y1 … yn, then kPad
  std::vector<std::int32_t> tgt_out;      // [B, Tt]: y1 … yn </s>, then kPad
  std::vector<std::int32_t> tgt_lengths;  // [B]: n + 1
  std::int64_t target_tokens() const;
};

// Builds a batch from token sequences (no <s>/</s> inside them).
Batch make_batch(const std::vector<std::vector<std::int32_t>>& sources,
                 const std::vector<std::vector<std::int32_t>>& targets);

}  // namespace attn::model
