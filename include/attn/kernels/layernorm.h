// LayerNorm over the last dimension. Each kernel is built per ISA and picked at
// run time (src/kernels/kernel_table.h). Threads: OpenMP over rows (or blocks of
// rows) above ~16k elements, serial inside a parallel region; results are the
// same for any thread count.
#pragma once
#include <cstdint>

namespace attn::kernels {

// x, y: [rows, d]; gamma, beta: [d]; mean, rstd: [rows] saved for backward.
// y = (x − mean) · rstd ⊙ gamma + beta, rstd = 1 / sqrt(var + eps) (biased var).
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                       std::int64_t rows, std::int64_t d, float eps);

// dy, x, dx: [rows, d]; gamma, dgamma, dbeta: [d]; mean, rstd: [rows] from the
// forward. Accumulates: dx += ∂L/∂x, dgamma += ∂L/∂gamma, dbeta += ∂L/∂beta.
// dgamma/dbeta may be nullptr (no affine gradients wanted). dgamma and dbeta
// are sums over fixed blocks of rows added in block order: bitwise the same
// for any thread count.
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d);

}  // namespace attn::kernels
