// The fusion gate of each head (directional/fusion_gate.h): forward, data
// backward, parameter gradients and its maps' extra.
#include "attn/nn/mechanisms/directional/fusion_gate.h"

#include <cmath>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/directional/head_math.h"

namespace attn::nn {

using kernels::Trans;

void FusionGate::declare(ParamStore& params, const std::string& name, std::int64_t heads, std::int64_t head_dim,
                         std::int64_t row_stride) {
  heads_ = heads;
  head_dim_ = head_dim;
  d_ = row_stride;
  const std::int64_t H = heads, dh = head_dim;
  // 3-D, so Xavier's fans (2d_h in, d_h out) are given explicitly.
  weight_ =
      params.add(name + ".gate.weight", {H, dh, 2 * dh}, Init::uniform, std::sqrt(6.0f / static_cast<float>(3 * dh)));
  bias_ = params.add(name + ".gate.bias", {H, dh}, Init::zeros, 0.0f, false);
  for (std::int64_t h = 0; h < H; ++h) {
    v_matrices_.push_back(params.add_weight_matrix({weight_, dh, dh, 2 * dh, h * dh * 2 * dh}));
    o_matrices_.push_back(params.add_weight_matrix({weight_, dh, dh, 2 * dh, h * dh * 2 * dh + dh}));
  }
}

void FusionGate::forward(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, const float* o,
                         float* g, float* u, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  const float* bg = params.value(bias_) + h * dh;
  if (rows <= 0) return;
  kernels::weight_product(params.form(v_matrices_[h]), rows, v, ldv, 0.0f, g, d);
  kernels::weight_product(params.form(o_matrices_[h]), rows, o, d, 1.0f, g, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float gate = directional::sigmoid(g[r * d + c] + bg[c]);
      g[r * d + c] = gate;
      u[r * d + c] = gate * v[r * ldv + c] + (1.0f - gate) * o[r * d + c];
    }
}

void FusionGate::backward(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, const float* o,
                          const float* g, const float* du, float* dz, float* dv, float* dout, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float gi = g[i * d + c], dui = du[i * d + c];
      dz[i * d + c] = dui * (v[i * ldv + c] - o[i * d + c]) * gi * (1.0f - gi);
      dv[i * ldv + c] += dui * gi;
      dout[i * dh + c] = dui * (1.0f - gi);
    }
  kernels::weight_product_backward(params.form(v_matrices_[h]), rows, dz, d, 1.0f, dv, ldv);
  kernels::weight_product_backward(params.form(o_matrices_[h]), rows, dz, d, 1.0f, dout, dh);
}

void FusionGate::parameter_gradients(ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                     const float* o, const float* dz, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_, col = h * dh;
  float* gwg = params.grad(weight_) + h * dh * 2 * dh;  // [dh, 2dh]: dZᵀ [v ; O]
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, v + col, ldv,
                1.0f, gwg, 2 * dh);
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, o + col, d, 1.0f,
                gwg + dh, 2 * dh);
  directional::add_column_sums(dz + col, d, rows, dh, params.grad(bias_) + col);
}

nlohmann::json FusionGate::feature_means(const float* g, std::int64_t len) const {
  const std::int64_t dh = head_dim_, d = d_;
  nlohmann::json gate = nlohmann::json::array();
  for (std::int64_t h = 0; h < heads_; ++h) {
    std::vector<float> per_token(static_cast<std::size_t>(len));
    for (std::int64_t i = 0; i < len; ++i) {
      double mean = 0.0;
      for (std::int64_t c = 0; c < dh; ++c) mean += g[i * d + h * dh + c];
      per_token[i] = static_cast<float>(mean / static_cast<double>(dh));
    }
    gate.push_back(per_token);
  }
  return gate;
}

}  // namespace attn::nn
