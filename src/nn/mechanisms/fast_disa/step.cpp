// Fast-DiSA's incremental decoding (causal only): one new position per
// sequence against the cached k, S and v of the earlier ones.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attn/core/error.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "head_math.h"

namespace attn::nn {

void FastDisaMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                         std::int64_t t_max) const {
  require(causal_, "Fast-DiSA: incremental decoding needs the causal variant (decoder self-attention)");
  const std::int64_t H = heads_, dh = head_dim_, d = d_, qs = 3 * d, width = cache_width(), keys = t + 1;
  float* proj = ctx.arena.alloc(n * qs);  // [N, 3d]
  qkv_.forward(ctx.params, x, proj, n);
  float* hidden = ctx.arena.alloc(n * d);  // [N, d]
  float* s_now = ctx.arena.alloc(n * d);   // [N, d]: S of position t, unshifted
  for (std::int64_t h = 0; h < H; ++h)
    source2token(ctx.params, h, proj + 2 * d + h * dh, qs, hidden + h * dh, s_now + h * dh, n);
  for (std::int64_t i = 0; i < n; ++i) {
    float* entry = cache + (i * t_max + t) * width;  // [3d]: k | S | v
    std::memcpy(entry, proj + i * qs + d, sizeof(float) * d);
    std::memcpy(entry + d, s_now + i * d, sizeof(float) * d);
    std::memcpy(entry + 2 * d, proj + i * qs + 2 * d, sizeof(float) * d);
  }
  float* o = ctx.arena.alloc(n * d);  // [N, d]
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    std::vector<float> logit(static_cast<std::size_t>(keys)), weight(static_cast<std::size_t>(keys)),
        p(static_cast<std::size_t>(keys)), shift(static_cast<std::size_t>(dh)), den(static_cast<std::size_t>(dh)),
        num(static_cast<std::size_t>(dh));
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t h = 0; h < H; ++h) {
        const float* q = proj + i * qs + h * dh;
        const float* base = cache + i * t_max * width + h * dh;  // k at +0, S at +d, v at +2d of each entry
        fast_disa::t2t_logits(q, base, width, dh, scale, keys, logit.data());
        weight = logit;
        fast_disa::token2token_row(weight.data(), 0, keys, sigmoid_);
        std::fill(shift.begin(), shift.end(), -std::numeric_limits<float>::infinity());
        for (std::int64_t j = 0; j < keys; ++j)
          for (std::int64_t c = 0; c < dh; ++c) shift[c] = std::max(shift[c], base[j * width + d + c]);
        std::fill(den.begin(), den.end(), 0.0f);
        std::fill(num.begin(), num.end(), 0.0f);
        for (std::int64_t j = 0; j < keys; ++j) {
          const float* sj = base + j * width + d;
          const float* vj = base + j * width + 2 * d;
          for (std::int64_t c = 0; c < dh; ++c) {
            const float ae = weight[j] * std::exp(sj[c] - shift[c]);
            den[c] += ae;
            num[c] += ae * vj[c];
          }
        }
        for (std::int64_t c = 0; c < dh; ++c)  // keys ≥ 1, so a small D is the shared shift's underflow
          o[i * d + h * dh + c] = den[c] >= fast_disa::kFactorisedMinDenominator
                                      ? num[c] * (1.0f / den[c])
                                      : fast_disa::direct_feature_softmax(logit.data(), base + d + c, width,
                                                                          base + 2 * d + c, width, keys, sigmoid_,
                                                                          p.data());
      }
    }
  }
  const float* u = o;
  if (gated_) {
    float* g = ctx.arena.alloc(n * d);
    float* gated = ctx.arena.alloc(n * d);
    for (std::int64_t h = 0; h < H; ++h)
      gate_.forward(ctx.params, h, proj + 2 * d + h * dh, qs, o + h * dh, g + h * dh, gated + h * dh, n);
    u = gated;
  }
  o_.forward(ctx.params, u, y, n);
}

}  // namespace attn::nn
