// Dots and weighted sums over rows spaced `stride` floats apart (the keys or
// values of one head at consecutive positions): the inner loops of windowed
// attention. Single-threaded: callers run them inside their own parallel loops.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_ROWS_KERNELS(X)                                                                                           \
  /* out[c] = scale · Σ_x a[x] · rows[c·stride + x], c < count, x < n. */                                              \
  X(void, strided_dots, (const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,   \
                         float scale, float* out),                                                                     \
    (a, rows, stride, count, n, scale, out))                                                                           \
  /* y[x] += Σ_c coef[c] · rows[c·stride + x], x < n. */                                                               \
  X(void, accumulate_rows, (const float* coef, const float* rows, std::int64_t stride, std::int64_t count,             \
                            std::int64_t n, float* y),                                                                 \
    (coef, rows, stride, count, n, y))

namespace attn::kernels {
ATTN_ROWS_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
