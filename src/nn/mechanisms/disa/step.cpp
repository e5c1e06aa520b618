// DiSA's incremental decoding (causal only): one new position per sequence,
// its row of the tensors against the cached v and key terms of positions ≤ t.
#include <cstring>
#include <vector>

#include "attn/core/error.h"
#include "attn/nn/mechanisms/disa/disa.h"

namespace attn::nn {

void DisaMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                     std::int64_t t_max) const {
  require(causal_, "DiSA: incremental decoding needs the causal variant (decoder self-attention)");
  const std::int64_t H = heads_, dh = head_dim_, d = d_, width = cache_width(), keys = t + 1;
  float* v = ctx.arena.alloc(n * d);  // [N, d]
  v_.forward(ctx.params, x, v, n);
  float* query = ctx.arena.alloc(n * d);  // [N, d]
  float* key = ctx.arena.alloc(n * d);    // [N, d]
  for (std::int64_t h = 0; h < H; ++h) head_terms(ctx.params, h, v + h * dh, d, query + h * dh, key + h * dh, n);
  for (std::int64_t i = 0; i < n; ++i) {
    float* entry = cache + (i * t_max + t) * width;  // [2d]: v | key
    std::memcpy(entry, v + i * d, sizeof(float) * d);
    std::memcpy(entry + d, key + i * d, sizeof(float) * d);
  }
  float* o = ctx.arena.alloc(n * d);  // [N, d]
#pragma omp parallel
  {
    std::vector<float> tanh_row(static_cast<std::size_t>(keys * dh)), p_row(static_cast<std::size_t>(keys * dh)),
        den(static_cast<std::size_t>(dh));
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t h = 0; h < H; ++h) {
        const float* base = cache + i * t_max * width + h * dh;  // v at +0, key at +d of each entry
        row_weights(query + i * d + h * dh, base + d, width, keys, tanh_row.data(), p_row.data(), den.data());
        mix_row(p_row.data(), base, width, keys, o + i * d + h * dh);
      }
    }
  }
  float* g = ctx.arena.alloc(n * d);
  float* u = ctx.arena.alloc(n * d);
  for (std::int64_t h = 0; h < H; ++h)
    gate_.forward(ctx.params, h, v + h * dh, d, o + h * dh, g + h * dh, u + h * dh, n);
  o_.forward(ctx.params, u, y, n);
}

}  // namespace attn::nn
