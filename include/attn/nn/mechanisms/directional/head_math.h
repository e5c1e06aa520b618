// The scalar pieces that DiSA and Fast-DiSA share: the logistic function of
// their fusion gates (and of Fast-DiSA's sigmoid token2token weights) and the
// bias gradients of their per-head parameters.
#pragma once
#include <cmath>
#include <cstdint>

namespace attn::nn::directional {

inline float sigmoid(float z) {
  if (z >= 0.0f) return 1.0f / (1.0f + std::exp(-z));
  const float e = std::exp(z);
  return e / (1.0f + e);
}

// bias[c] += Σ_r g[r, c] for c < width, rows in order; g's rows ld apart.
inline void add_column_sums(const float* g, std::int64_t ld, std::int64_t rows, std::int64_t width, float* bias) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < width; ++c) bias[c] += g[r * ld + c];
}

}  // namespace attn::nn::directional
