// Elementwise arithmetic and reductions over flat float arrays.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_ELEMENTWISE_KERNELS(X)                                                                                    \
  /* y = a + b (y may alias) */                                                                                        \
  X(void, add, (const float* a, const float* b, float* y, std::int64_t n), (a, b, y, n))                               \
  /* x *= alpha */                                                                                                     \
  X(void, scale, (float* x, float alpha, std::int64_t n), (x, alpha, n))                                               \
  /* y += alpha · x */                                                                                                 \
  X(void, axpy, (float alpha, const float* x, float* y, std::int64_t n), (alpha, x, y, n))                             \
  /* y[r, :] += v */                                                                                                   \
  X(void, add_row_vector, (float* y, const float* v, std::int64_t rows, std::int64_t cols), (y, v, rows, cols))        \
  /* dv += Σ_r dy[r, :] (the bias gradient); dy: [rows, cols], dv: [cols]. */                                          \
  X(void, sum_rows, (const float* dy, float* dv, std::int64_t rows, std::int64_t cols), (dy, dv, rows, cols))          \
  /* Reductions accumulate in double; a fixed blocking makes them independent                                          \
     of the thread count. */                                                                                           \
  X(double, sum, (const float* x, std::int64_t n), (x, n))                                                             \
  X(double, sum_squares, (const float* x, std::int64_t n), (x, n))                                                     \
  /* -inf for n == 0 */                                                                                                \
  X(float, max_value, (const float* x, std::int64_t n), (x, n))                                                        \
  /* True when every value is finite (no NaN, no ±Inf). */                                                             \
  X(bool, all_finite, (const float* x, std::int64_t n), (x, n))

namespace attn::kernels {
ATTN_ELEMENTWISE_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
