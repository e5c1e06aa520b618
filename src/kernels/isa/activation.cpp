// ReLU and GELU (tanh form), elementwise, in explicit vectors (each
// activation is written once, for a float vector or a float). GELU uses
//   0.5 · (1 + tanh(u)) = sigmoid(2u),   u = √(2/π) · (x + 0.044715 x³),
// which needs one exp and stays accurate in relative terms on both tails.
#include "isa.h"

#include <algorithm>

#include "kernels.h"
#include "attn/kernels/activation.h"
#include "parallel_for.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
using vec_math::kWidth;
using vec_math::load;
using vec_math::load_partial;
using vec_math::store;
using vec_math::store_partial;
using vec_math::Vec;

constexpr std::int64_t kChunk = 4096;  // elements per unit of parallel work
constexpr float kSqrt2OverPi = 0.797884560802865f;
constexpr float kCubic = 0.044715f;

// Each takes and returns a Vec (or a float). NaN propagates (a NaN loss must
// stay visible).
constexpr auto relu = [](auto x) {
  const decltype(x) zero{};
  return x < zero ? zero : x;
};

constexpr auto gelu = [](auto x) { return x * vec_math::sigmoid(2.0f * kSqrt2OverPi * (x + kCubic * x * x * x)); };

constexpr auto identity = [](auto x) { return x; };

// d/dx [x · s(2u)] = s + x · s (1 − s) · 2u'.
constexpr auto gelu_derivative = [](auto x) {
  const auto x2 = x * x;
  const auto s = vec_math::sigmoid(2.0f * kSqrt2OverPi * (x + kCubic * x2 * x));
  const auto two_du = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kCubic * x2);
  return s + x * s * (1.0f - s) * two_du;
};

// Runs step(i, count) over [begin, end) in whole vectors and one partial
// tail: step loads count (≤ kWidth) elements at i, with load_partial when
// count < kWidth.
template <typename Step>
inline void for_vectors(std::int64_t begin, std::int64_t end, Step step) {
  std::int64_t i = begin;
  for (; i + kWidth <= end; i += kWidth) step(i, std::int64_t{kWidth});
  if (i < end) step(i, end - i);
}

inline Vec load_count(const float* p, std::int64_t count) {
  return count == kWidth ? load(p) : load_partial(p, count, 0.0f);
}
inline void store_count(float* p, Vec v, std::int64_t count) {
  if (count == kWidth)
    store(p, v);
  else
    store_partial(p, v, count);
}

// y[i] = act(x[i]); x, y: [n].
template <typename Act>
void apply(const float* x, float* y, std::int64_t n, Act act) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for_vectors(begin, end,
                [=](std::int64_t i, std::int64_t count) { store_count(y + i, act(load_count(x + i, count)), count); });
  });
}

// dx[i] += dy[i] · derivative(x[i]); x, dy, dx: [n].
template <typename Derivative>
void apply_backward(const float* x, const float* dy, float* dx, std::int64_t n, Derivative derivative) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for_vectors(begin, end, [=](std::int64_t i, std::int64_t count) {
      const Vec sum = load_count(dx + i, count) + load_count(dy + i, count) * derivative(load_count(x + i, count));
      store_count(dx + i, sum, count);
    });
  });
}

// y: [rows, cols] in place, bias: [cols] or null, pre: [rows, cols] or null.
template <typename Act>
void apply_with_bias(float* y, const float* bias, float* pre, std::int64_t rows, std::int64_t cols, Act act) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    float* y_row = y + r * cols;
    float* pre_row = pre == nullptr ? nullptr : pre + r * cols;
    for_vectors(0, cols, [=](std::int64_t j, std::int64_t count) {
      Vec v = load_count(y_row + j, count);
      if (bias != nullptr) v += load_count(bias + j, count);
      if (pre_row != nullptr) store_count(pre_row + j, v, count);
      store_count(y_row + j, act(v), count);
    });
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
        for_vectors(begin, end, [=](std::int64_t i, std::int64_t count) {
          const Vec zero{};
          const Vec passed = load_count(x + i, count) > zero ? load_count(dy + i, count) : zero;
          store_count(dx + i, load_count(dx + i, count) + passed, count);
        });
      });
      return;
    case Activation::gelu: return apply_backward(x, dy, dx, n, gelu_derivative);
    case Activation::none: return apply_backward(x, dy, dx, n, [](Vec) { return vec_math::splat(1.0f); });
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
