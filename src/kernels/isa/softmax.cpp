// Row softmax and log-softmax: one pass for the max, one for exp and its sum
// (vector lanes combined in a fixed order), one to normalise. Rows are
// independent and split across threads, so results never depend on them.
#include "isa.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/kernels/softmax.h"

#include "parallel_for.h"
#include "kernels.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
using vec_math::kWidth;
using vec_math::Vec;
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

std::int64_t valid_columns(const std::int32_t* valid, std::int64_t row, std::int64_t cols) {
  return valid == nullptr ? cols : std::clamp<std::int64_t>(valid[row], 0, cols);
}

// e[j] = exp(scale · x[j] − shift) for j < n; returns Σ e. x, e: [n]; e may alias x.
float exp_and_sum(const float* x, float* e, std::int64_t n, float scale, float shift) {
  const Vec scale_v = vec_math::splat(scale), minus_shift = vec_math::splat(-shift);
  Vec acc = Vec{};
  std::int64_t j = 0;
  for (; j + kWidth <= n; j += kWidth) {
    const Vec v = vec_math::exp(vec_math::mul_add(scale_v, vec_math::load(x + j), minus_shift));
    vec_math::store(e + j, v);
    acc += v;
  }
  if (j < n) {  // the missing lanes read −inf, whose exp is 0
    const Vec v =
        vec_math::exp(vec_math::mul_add(scale_v, vec_math::load_partial(x + j, n - j, kMinusInf), minus_shift));
    vec_math::store_partial(e + j, v, n - j);
    acc += v;
  }
  return vec_math::reduce_add(acc);
}

// Σ exp(x[j] − shift) over x: [n], without storing the terms.
float sum_exp(const float* x, std::int64_t n, float shift) {
  return vec_math::sum_of(
      n, [=](std::int64_t j) { return vec_math::exp(vec_math::load(x + j) - shift); },
      [=](std::int64_t j, std::int64_t count) {
        return vec_math::exp(vec_math::load_partial(x + j, count, kMinusInf) - shift);
      });
}

// x, y: [cols], the first n valid.
void softmax_row(const float* x, float* y, std::int64_t n, std::int64_t cols, float scale) {
  if (n > 0) {
    // scale > 0, so the max of scale · x is scale times the max of x; every
    // exponent is then ≤ 0 (up to one rounding), whatever the logits' size.
    const float shift = scale * vec_math::max(x, n);
    const float inverse_sum = 1.0f / exp_and_sum(x, y, n, scale, shift);
    for (std::int64_t j = 0; j < n; ++j) y[j] *= inverse_sum;
  }
  std::fill(y + n, y + cols, 0.0f);
}
}  // namespace

void softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid,
                     float scale) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    softmax_row(x + r * cols, y + r * cols, valid_columns(valid, r, cols), cols, scale);
  });
}

void softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,
                      const std::int32_t* valid, float scale) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    const std::int64_t n = valid_columns(valid, r, cols);
    const float* y_row = y + r * cols;
    const float* dy_row = dy + r * cols;
    float* dx_row = dx + r * cols;
    const float y_dot_dy = vec_math::dot(y_row, dy_row, n);
    for (std::int64_t j = 0; j < n; ++j) dx_row[j] = scale * y_row[j] * (dy_row[j] - y_dot_dy);
    std::fill(dx_row + n, dx_row + cols, 0.0f);
  });
}

void log_softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  if (cols == 0) return;
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    const float* x_row = x + r * cols;
    float* y_row = y + r * cols;
    const float max = vec_math::max(x_row, cols);
    // The sum is ≥ 1 (the max term is exp(0)), so its log is finite.
    const float shift = max + std::log(sum_exp(x_row, cols, max));
    for (std::int64_t j = 0; j < cols; ++j) y_row[j] = x_row[j] - shift;
  });
}

void log_softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    const float* y_row = y + r * cols;
    const float* dy_row = dy + r * cols;
    float* dx_row = dx + r * cols;
    const float dy_sum = vec_math::sum(dy_row, cols);
    const Vec dy_sum_v = vec_math::splat(dy_sum);
    std::int64_t j = 0;
    for (; j + kWidth <= cols; j += kWidth) {
      const Vec probability = vec_math::exp(vec_math::load(y_row + j));
      vec_math::store(dx_row + j, vec_math::load(dy_row + j) - probability * dy_sum_v);
    }
    for (; j < cols; ++j) dx_row[j] = dy_row[j] - vec_math::exp(y_row[j]) * dy_sum;
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
