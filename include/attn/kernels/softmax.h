// Row softmax with a per-row length mask, row log-softmax, and their backwards.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_SOFTMAX_KERNELS(X)                                                                                        \
  /* x, y: [rows, cols]; valid: [rows] or nullptr; scale > 0. For each row r,                                          \
     y[r, j] = softmax_j(scale · x[r, j]) over j < valid[r]; columns j ≥ valid[r]                                      \
     get exactly 0. valid == nullptr means every column is valid; valid[r] is                                          \
     clamped to [0, cols]; a row with valid[r] == 0 is all zeros (never NaN).                                          \
     The max is subtracted first, so logits of any finite size are safe; −inf                                          \
     logits get probability 0. Results are bitwise the same for any thread count                                       \
     (rows are independent), also when called from inside a parallel region.                                           \
     y may alias x. */                                                                                                 \
  X(void, softmax_forward, (const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid, \
                            float scale),                                                                              \
    (x, y, rows, cols, valid, scale))                                                                                  \
  /* y, dy, dx: [rows, cols]; valid as for the forward.                                                                \
     dx[r, j] = scale · y[r, j] · (dy[r, j] − Σ_j' dy[r, j'] · y[r, j']), written                                      \
     (not accumulated); 0 where y is masked. dx may alias dy. */                                                       \
  X(void, softmax_backward, (const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,         \
                             const std::int32_t* valid, float scale),                                                  \
    (y, dy, dx, rows, cols, valid, scale))                                                                             \
  /* x, y: [rows, cols]. y[r, j] = x[r, j] − log Σ_j' exp(x[r, j']), every column                                      \
     valid (the output-vocabulary case, fused into the loss). y may alias x. */                                        \
  X(void, log_softmax_forward, (const float* x, float* y, std::int64_t rows, std::int64_t cols), (x, y, rows, cols))   \
  /* y: the forward output; dx[r, j] = dy[r, j] − exp(y[r, j]) · Σ_j' dy[r, j'],                                       \
     written (not accumulated). dx may alias dy. */                                                                    \
  X(void, log_softmax_backward, (const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols),    \
    (y, dy, dx, rows, cols))

namespace attn::kernels {
ATTN_SOFTMAX_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
