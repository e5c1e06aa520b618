// ReLU and GELU (tanh approximation, as in GPT-2 and llm.c), forward and backward,
// and the bias+activation fusion used after a Linear.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

namespace attn::kernels {

enum class Activation { none, relu, gelu };

}  // namespace attn::kernels

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_ACTIVATION_KERNELS(X)                                                                                     \
  /* x, y: [n]. y = act(x); y may alias x. NaN propagates. */                                                          \
  X(void, activation_forward, (Activation act, const float* x, float* y, std::int64_t n), (act, x, y, n))              \
  /* x, dy, dx: [n]. dx += dy · act'(x), where x is the pre-activation input                                           \
     (ReLU'(0) = 0). dx must not alias dy. */                                                                          \
  X(void, activation_backward, (Activation act, const float* x, const float* dy, float* dx, std::int64_t n),           \
    (act, x, dy, dx, n))                                                                                               \
  /* In place on y: [rows, cols]: y[r, :] = act(y[r, :] + bias), bias: [cols] (may be null).                           \
     When pre != nullptr, pre receives y + bias before the activation (what backward needs). */                        \
  X(void, bias_activation_forward, (Activation act, float* y, const float* bias, float* pre, std::int64_t rows,        \
                                    std::int64_t cols),                                                                \
    (act, y, bias, pre, rows, cols))

namespace attn::kernels {
ATTN_ACTIVATION_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
