// The fusion gate of each head (docs/mechanisms-spec.md §3.1, §4.5), forward, data backward and
// parameter gradients: G_h = σ([v_h ; O_h] W_g[h]ᵀ + b_g[h]),
// U_h = G_h ⊙ v_h + (1 − G_h) ⊙ O_h.
#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "head_math.h"

namespace attn::nn {

using kernels::Trans;

void FastDisaMixer::fusion_gate(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                const float* o, float* g, float* u, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  // The gate's [dh, 2dh]: columns 0..dh read v, dh..2dh read O.
  const float* bg = params.value(gate_bias_) + h * dh;
  if (rows <= 0) return;
  kernels::weight_product(params.form(gate_v_matrices_[h]), rows, v, ldv, 0.0f, g, d);
  kernels::weight_product(params.form(gate_o_matrices_[h]), rows, o, d, 1.0f, g, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float gate = fast_disa::sigmoid(g[r * d + c] + bg[c]);
      g[r * d + c] = gate;
      u[r * d + c] = gate * v[r * ldv + c] + (1.0f - gate) * o[r * d + c];
    }
}

void FastDisaMixer::fusion_gate_backward(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                         const float* o, const float* g, const float* du, float* dz, float* dv,
                                         float* dout, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float gi = g[i * d + c], dui = du[i * d + c];
      dz[i * d + c] = dui * (v[i * ldv + c] - o[i * d + c]) * gi * (1.0f - gi);
      dv[i * ldv + c] += dui * gi;
      dout[i * dh + c] = dui * (1.0f - gi);
    }
  kernels::weight_product_backward(params.form(gate_v_matrices_[h]), rows, dz, d, 1.0f, dv, ldv);
  kernels::weight_product_backward(params.form(gate_o_matrices_[h]), rows, dz, d, 1.0f, dout, dh);
}

void FastDisaMixer::fusion_gate_parameter_gradients(ParamStore& params, std::int64_t h, const float* v,
                                                    std::int64_t ldv, const float* o, const float* dz,
                                                    std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_, col = h * dh;
  float* gwg = params.grad(gate_weight_) + h * dh * 2 * dh;  // [dh, 2dh]: dZᵀ [v ; O]
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, v + col, ldv,
                1.0f, gwg, 2 * dh);
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, o + col, d, 1.0f,
                gwg + dh, 2 * dh);
  fast_disa::add_column_sums(dz + col, d, rows, dh, params.grad(gate_bias_) + col);
}

}  // namespace attn::nn
