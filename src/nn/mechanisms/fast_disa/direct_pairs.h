// FastDisaMixer::for_each_direct_pair, for the passes that visit the pairs the
// factorised form could not take (forward, backward, export_maps).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "head_math.h"

namespace attn::nn {

template <class Visit>
void FastDisaMixer::for_each_direct_pair(std::int64_t h, std::int64_t len, const float* q, const float* k,
                                         const float* s, const float* v, const float* inv_d,
                                         std::vector<float>& scratch, Visit&& visit) const {
  const std::int64_t dh = head_dim_, d = d_, qs = 3 * d_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (std::int64_t i = 0; i < len; ++i) {
    std::int64_t first = 0, end = 0;
    allowed_keys(h, i, len, first, end);
    const float* inv = inv_d + i * d;
    if (first >= end || std::find(inv, inv + dh, 0.0f) == inv + dh) continue;
    const std::int64_t n = end - first;
    scratch.resize(static_cast<std::size_t>(2 * n));
    float* r = scratch.data();  // [n]: R of the row's keys
    float* p = r + n;           // [n]: the pair's softmax
    fast_disa::t2t_logits(q + i * qs, k + first * qs, qs, dh, scale, n, r);
    for (std::int64_t c = 0; c < dh; ++c)
      if (inv[c] == 0.0f) {
        const float o =
            fast_disa::direct_feature_softmax(r, s + first * d + c, d, v + first * qs + c, qs, n, sigmoid_, p);
        visit(i, c, first, n, r, p, o);
      }
  }
}

}  // namespace attn::nn
