// ReLU and GELU (tanh approximation, as in GPT-2 and llm.c), forward and backward,
// and the bias+activation fusion used after a Linear. Each kernel is built per
// ISA and picked at run time (src/kernels/kernel_table.h). Threads: OpenMP over
// chunks or rows above ~16k elements, serial when called inside a parallel
// region; the result never depends on the thread count.
#pragma once
#include <cstdint>

namespace attn::kernels {

enum class Activation { none, relu, gelu };

// x, y: [n]. y = act(x); y may alias x. NaN propagates.
void activation_forward(Activation act, const float* x, float* y, std::int64_t n);

// x, dy, dx: [n]. dx += dy · act'(x), where x is the pre-activation input
// (ReLU'(0) = 0). dx must not alias dy.
void activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n);

// In place on y: [rows, cols]: y[r, :] = act(y[r, :] + bias), bias: [cols] (may
// be null). When pre != nullptr, pre ([rows, cols], not aliasing y) receives
// y + bias before the activation (what backward needs).
void bias_activation_forward(Activation act, float* y, const float* bias, float* pre, std::int64_t rows,
                             std::int64_t cols);

}  // namespace attn::kernels
