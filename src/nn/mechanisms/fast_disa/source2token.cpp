// The source2token MLP of each head (docs/mechanisms-spec.md §3.1, §4.4), forward, data
// backward and parameter gradients: S_h = ELU(v_h W_s1[h]ᵀ + b_s1[h]) W_s2[h]ᵀ + b_s2[h].
#include <cmath>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "head_math.h"

namespace attn::nn {

using kernels::Trans;

namespace {

// exp(z) − 1 rather than expm1: the absolute error (~1e-7) is what reaches the
// next product, and expm1f costs several times more.
float elu(float z) { return z > 0.0f ? z : std::exp(z) - 1.0f; }
// ELU′ from the output y = ELU(z): 1 for z > 0, else e^z = y + 1.
float elu_grad_from_output(float y) { return y > 0.0f ? 1.0f : y + 1.0f; }

}  // namespace

void FastDisaMixer::source2token(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                 float* hidden, float* s, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  const float* b1 = params.value(s1_bias_) + h * dh;  // [dh]
  const float* b2 = params.value(s2_bias_) + h * dh;
  if (rows <= 0) return;
  kernels::weight_product(params.form(s1_matrices_[h]), rows, v, ldv, 0.0f, hidden, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) hidden[r * d + c] = elu(hidden[r * d + c] + b1[c]);
  kernels::weight_product(params.form(s2_matrices_[h]), rows, hidden, d, 0.0f, s, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) s[r * d + c] += b2[c];
}

void FastDisaMixer::source2token_backward(const ParamStore& params, std::int64_t h, const float* hidden,
                                          const float* ds, float* dpre, float* dv, std::int64_t ldv,
                                          std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  kernels::weight_product_backward(params.form(s2_matrices_[h]), rows, ds, d, 0.0f, dpre, d);
  for (std::int64_t j = 0; j < rows; ++j)
    for (std::int64_t c = 0; c < dh; ++c) dpre[j * d + c] *= elu_grad_from_output(hidden[j * d + c]);
  kernels::weight_product_backward(params.form(s1_matrices_[h]), rows, dpre, d, 1.0f, dv, ldv);
}

void FastDisaMixer::source2token_parameter_gradients(ParamStore& params, std::int64_t h, const float* v,
                                                     std::int64_t ldv, const float* hidden, const float* ds,
                                                     const float* dpre, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_, col = h * dh;
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, ds + col, d, hidden + col, d,
                1.0f, params.grad(s2_weight_) + h * dh * dh, dh);
  fast_disa::add_column_sums(ds + col, d, rows, dh, params.grad(s2_bias_) + col);
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dpre + col, d, v + col, ldv,
                1.0f, params.grad(s1_weight_) + h * dh * dh, dh);
  fast_disa::add_column_sums(dpre + col, d, rows, dh, params.grad(s1_bias_) + col);
}

}  // namespace attn::nn
