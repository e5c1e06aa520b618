// LayerNorm over the last dimension.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_LAYERNORM_KERNELS(X)                                                                                      \
  /* x, y: [rows, d]; gamma, beta: [d]; mean, rstd: [rows] saved for backward.                                         \
     y = (x − mean) · rstd ⊙ gamma + beta, rstd = 1 / sqrt(var + eps) (biased var). */                                 \
  X(void, layernorm_forward, (const float* x, const float* gamma, const float* beta, float* y, float* mean,            \
                              float* rstd, std::int64_t rows, std::int64_t d, float eps),                              \
    (x, gamma, beta, y, mean, rstd, rows, d, eps))                                                                     \
  /* dy, x, dx: [rows, d]; gamma, dgamma, dbeta: [d]; mean, rstd: [rows] from the                                      \
     forward. Accumulates: dx += ∂L/∂x, dgamma += ∂L/∂gamma, dbeta += ∂L/∂beta.                                        \
     dgamma/dbeta may be nullptr (no affine gradients wanted). dgamma and dbeta                                        \
     are sums over fixed blocks of rows added in block order: bitwise the same                                         \
     for any thread count. */                                                                                          \
  X(void, layernorm_backward, (const float* dy, const float* x, const float* gamma, const float* mean,                 \
                               const float* rstd, float* dx, float* dgamma, float* dbeta, std::int64_t rows,           \
                               std::int64_t d),                                                                        \
    (dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, d))

namespace attn::kernels {
ATTN_LAYERNORM_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
