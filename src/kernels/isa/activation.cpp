// ReLU and GELU (tanh form), elementwise. GELU uses
//   0.5 · (1 + tanh(u)) = sigmoid(2u),   u = √(2/π) · (x + 0.044715 x³),
// which needs one exp and stays accurate in relative terms on both tails.
#include "isa.h"

#include <algorithm>

#include "attn/kernels/activation.h"
#include "parallel_for.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {
#include "activation.inc"

namespace {
constexpr float kSqrt2OverPi = 0.797884560802865f;
constexpr float kCubic = 0.044715f;

// Lambdas, not functions: passed to the templates below as a function
// pointer, a function is not inlined and the loops do not vectorise.

// NaN propagates (a NaN loss must stay visible).
constexpr auto relu = [](float x) { return x < 0.0f ? 0.0f : x; };

constexpr auto gelu = [](float x) {
  const float two_u = 2.0f * kSqrt2OverPi * (x + kCubic * x * x * x);
  return x * vec_math::sigmoid(two_u);
};

constexpr auto identity = [](float x) { return x; };

// d/dx [x · s(2u)] = s + x · s (1 − s) · 2u'.
constexpr auto gelu_derivative = [](float x) {
  const float x2 = x * x;
  const float two_u = 2.0f * kSqrt2OverPi * (x + kCubic * x2 * x);
  const float two_du = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kCubic * x2);
  const float s = vec_math::sigmoid(two_u);
  return s + x * s * (1.0f - s) * two_du;
};

constexpr std::int64_t kChunk = 4096;  // elements per unit of parallel work

// y[i] = act(x[i]); the same loop for each activation, chosen once outside it.
template <typename Act>
void apply(const float* x, float* y, std::int64_t n, Act act) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) y[i] = act(x[i]);
  });
}

// dx[i] += dy[i] · derivative(x[i]).
template <typename Derivative>
void apply_backward(const float* x, const float* dy, float* dx, std::int64_t n, Derivative derivative) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) dx[i] += dy[i] * derivative(x[i]);
  });
}

// y: [rows, cols] in place, bias: [cols] or null, pre: [rows, cols] or null.
template <typename Act>
void apply_with_bias(float* y, const float* bias, float* pre, std::int64_t rows, std::int64_t cols, Act act) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    float* y_row = y + r * cols;
    if (bias != nullptr)
      for (std::int64_t j = 0; j < cols; ++j) y_row[j] += bias[j];
    if (pre != nullptr) std::copy(y_row, y_row + cols, pre + r * cols);
    for (std::int64_t j = 0; j < cols; ++j) y_row[j] = act(y_row[j]);
  });
}
}  // namespace

void activation_forward(Activation act, const float* x, float* y, std::int64_t n) {
  switch (act) {
    case Activation::relu: return apply(x, y, n, relu);
    case Activation::gelu: return apply(x, y, n, gelu);
    case Activation::none:
      if (y != x) std::copy(x, x + n, y);
      return;
  }
}

void activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n) {
  switch (act) {
    case Activation::relu:
      // A select, not dy · (x > 0): an infinite dy where x ≤ 0 contributes 0.
      parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) dx[i] += x[i] > 0.0f ? dy[i] : 0.0f;
      });
      return;
    case Activation::gelu: return apply_backward(x, dy, dx, n, gelu_derivative);
    case Activation::none: return apply_backward(x, dy, dx, n, [](float) { return 1.0f; });
  }
}

void bias_activation_forward(Activation act, float* y, const float* bias, float* pre, std::int64_t rows,
                             std::int64_t cols) {
  switch (act) {
    case Activation::relu: return apply_with_bias(y, bias, pre, rows, cols, relu);
    case Activation::gelu: return apply_with_bias(y, bias, pre, rows, cols, gelu);
    case Activation::none: return apply_with_bias(y, bias, pre, rows, cols, identity);
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
