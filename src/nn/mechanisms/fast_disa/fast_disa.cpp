// FastDisaMixer's construction, key ranges and attention maps; the passes are
// in forward.cpp, backward.cpp and step.cpp, a head's parts in
// feature_softmax.cpp and source2token.cpp, the fusion gate in
// directional/fusion_gate.cpp (shared with DiSA).
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/core/error.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/directional/directions.h"
#include "direct_pairs.h"

namespace attn::nn {

FastDisaMixer::FastDisaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec)
    : d_(spec.d), heads_(spec.heads), causal_(spec.causal), gated_(option_value<bool>(spec, "disa_gate")),
      attention_dropout_(spec.attention_dropout) {
  directional::require_directional_heads(spec, "Fast-DiSA");
  const auto t2t = option_value<std::string>(spec, "disa_t2t");
  require(t2t == "exp" || t2t == "sigmoid", "--disa-t2t must be 'exp' or 'sigmoid', not '" + t2t + "'");
  sigmoid_ = t2t == "sigmoid";
  head_dim_ = d_ / heads_;
  const std::int64_t H = heads_, dh = head_dim_;
  qkv_ = declare_qkv(params, name, d_);
  o_.declare(params, name + ".o", d_, d_);
  // Per-head weights are 3-D, so Xavier's fans are given explicitly (the store's
  // xavier_uniform reads fans from a 2-D shape).
  const float square_bound = std::sqrt(6.0f / static_cast<float>(2 * dh));
  s1_weight_ = params.add(name + ".s1.weight", {H, dh, dh}, Init::uniform, square_bound);
  s1_bias_ = params.add(name + ".s1.bias", {H, dh}, Init::zeros, 0.0f, false);
  s2_weight_ = params.add(name + ".s2.weight", {H, dh, dh}, Init::uniform, square_bound);
  s2_bias_ = params.add(name + ".s2.bias", {H, dh}, Init::zeros, 0.0f, false);
  if (gated_) gate_.declare(params, name, H, dh, d_);
  for (std::int64_t h = 0; h < H; ++h) {
    s1_matrices_.push_back(params.add_weight_matrix({s1_weight_, dh, dh, dh, h * dh * dh}));
    s2_matrices_.push_back(params.add_weight_matrix({s2_weight_, dh, dh, dh, h * dh * dh}));
  }
}

void FastDisaMixer::allowed_keys(std::int64_t h, std::int64_t i, std::int64_t len, std::int64_t& first,
                                 std::int64_t& end) const {
  directional::allowed_keys(causal_, heads_, h, i, len, first, end);
}

MixerMaps FastDisaMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t H = heads_, dh = head_dim_, d = d_, T = s.t;
  const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, T);
  // P_ijk = A_ij E_jk / D_ik; its sum over k is A_ij · Σ_k E_jk / D_ik.
  MixerMaps maps = directional::feature_mean_maps(H, dh, len, [&](std::int64_t h, std::int64_t i, std::int64_t j) {
    const float a = s.t2t[((b * H + h) * T + i) * T + j];
    if (a == 0.0f) return 0.0;
    const float* e = s.e + (b * T + j) * d + h * dh;          // [dh]
    const float* inv_d = s.inv_d + (b * T + i) * d + h * dh;  // [dh]
    double sum = 0.0;
    for (std::int64_t c = 0; c < dh; ++c) sum += static_cast<double>(e[c]) * inv_d[c];
    return a * sum;
  });
  // The pairs computed directly add their own P_ijk / d_h.
  std::vector<float> direct;
  for (std::int64_t h = 0; h < H; ++h) {
    const float* q = s.qkv + b * T * 3 * d + h * dh;
    const std::int64_t at = b * T * d + h * dh;
    float* out = maps.weights.data() + h * len * len;
    for_each_direct_pair(h, len, q, q + d, s.s_term + at, q + 2 * d, s.inv_d + at, direct,
                         [&](std::int64_t i, std::int64_t, std::int64_t first, std::int64_t n, const float*,
                             const float* p, float) {
                           for (std::int64_t j = 0; j < n; ++j) out[i * len + first + j] += p[j] / dh;
                         });
  }
  maps.extras = directional::map_extras(
      causal_, H, gated_ ? gate_.feature_means(s.gate + b * T * d, len) : nlohmann::json(nullptr));
  return maps;
}

}  // namespace attn::nn
