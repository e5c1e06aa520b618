// DisaMixer's construction, a head's query and key terms, one query's row of
// the T × T × d_h tensors (forward and backward side by side) and the maps;
// the passes are in passes.cpp and step.cpp.
#include "attn/nn/mechanisms/disa/disa.h"

#include <algorithm>
#include <cmath>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/directional/directions.h"

namespace attn::nn {

DisaMixer::DisaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec)
    : d_(spec.d), heads_(spec.heads), causal_(spec.causal), attention_dropout_(spec.attention_dropout) {
  directional::require_directional_heads(spec, "DiSA");
  head_dim_ = d_ / heads_;
  const std::int64_t H = heads_, dh = head_dim_;
  v_.declare(params, name + ".v", d_, d_);
  o_.declare(params, name + ".o", d_, d_);
  // Per-head weights are 3-D, so Xavier's fans are given explicitly.
  const float square_bound = std::sqrt(6.0f / static_cast<float>(2 * dh));
  f1_weight_ = params.add(name + ".f1.weight", {H, dh, dh}, Init::uniform, square_bound);
  f2_weight_ = params.add(name + ".f2.weight", {H, dh, dh}, Init::uniform, square_bound);
  f_bias_ = params.add(name + ".f.bias", {H, dh}, Init::zeros, 0.0f, false);
  gate_.declare(params, name, H, dh, d_);
  for (std::int64_t h = 0; h < H; ++h) {
    f1_matrices_.push_back(params.add_weight_matrix({f1_weight_, dh, dh, dh, h * dh * dh}));
    f2_matrices_.push_back(params.add_weight_matrix({f2_weight_, dh, dh, dh, h * dh * dh}));
  }
}

void DisaMixer::head_terms(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, float* query,
                           float* key, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  if (rows <= 0) return;
  const float* bias = params.value(f_bias_) + h * dh;  // [dh]
  kernels::weight_product(params.form(f1_matrices_[h]), rows, v, ldv, 0.0f, query, d);
  kernels::weight_product(params.form(f2_matrices_[h]), rows, v, ldv, 0.0f, key, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) key[r * d + c] += bias[c];
}

void DisaMixer::row_weights(const float* query, const float* key, std::int64_t ldk, std::int64_t n, float* tanh_row,
                            float* p_row, float* den) const {
  const std::int64_t dh = head_dim_;
  const float c_scale = kTanhScale, inv_c = 1.0f / kTanhScale;
  std::fill(den, den + dh, 0.0f);
  // f = c·tanh(a/c) lies in (−c, c), so e^f neither overflows nor underflows: no max shift.
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float t = std::tanh((query[c] + key[j * ldk + c]) * inv_c);
      const float e = std::exp(c_scale * t);
      tanh_row[j * dh + c] = t;
      p_row[j * dh + c] = e;
      den[c] += e;
    }
  for (std::int64_t c = 0; c < dh; ++c) den[c] = 1.0f / den[c];
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < dh; ++c) p_row[j * dh + c] *= den[c];
}

// With z_j = f_j the logits of one feature and O = Σ_j P̃_j v_j, P̃_j = P_j m_j:
// ∂O/∂z_j = P_j (m_j v_j − O) = P̃_j v_j − P_j O, and ∂f/∂a = 1 − tanh²(a/c).
void DisaMixer::row_weights_backward(const float* tanh_row, const float* p_row, const float* p_drop, const float* v,
                                     std::int64_t ldv, const float* o, const float* dout, std::int64_t n, float* dv,
                                     float* dquery, float* dkey, std::int64_t lddk) const {
  const std::int64_t dh = head_dim_;
  const float* pm = p_drop ? p_drop : p_row;  // the weights that multiplied v
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float g = dout[c], p = p_row[j * dh + c], pv = pm[j * dh + c], t = tanh_row[j * dh + c];
      dv[j * ldv + c] += pv * g;
      const float da = g * (pv * v[j * ldv + c] - p * o[c]) * (1.0f - t * t);
      dquery[c] += da;
      dkey[j * lddk + c] += da;
    }
}

void DisaMixer::mix_row(const float* p, const float* v, std::int64_t ldv, std::int64_t n, float* o) const {
  const std::int64_t dh = head_dim_;
  std::fill(o, o + dh, 0.0f);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < dh; ++c) o[c] += p[j * dh + c] * v[j * ldv + c];
}

MixerMaps DisaMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t H = heads_, dh = head_dim_, d = d_, T = s.t;
  const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, T);
  MixerMaps maps = directional::feature_mean_maps(H, dh, len, [&](std::int64_t h, std::int64_t i, std::int64_t j) {
    const float* p = s.p + (((b * H + h) * T + i) * T + j) * dh;  // [dh]: P_ij of every feature
    double sum = 0.0;
    for (std::int64_t c = 0; c < dh; ++c) sum += p[c];
    return sum;
  });
  maps.extras = directional::map_extras(causal_, H, gate_.feature_means(s.gate + b * T * d, len));
  return maps;
}

}  // namespace attn::nn
