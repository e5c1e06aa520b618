// Elementwise kernels, written as plain loops the compiler vectorises for the
// ISA this file is compiled for. Threads only above a size where they pay off.
#include "isa.h"

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/kernels/elementwise.h"

#include "kernels.h"
#include "parallel_for.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
constexpr std::int64_t kChunk = 4096;        // elements per unit of parallel work
constexpr std::int64_t kReduceBlock = 4096;  // fixed blocks keep reductions thread-count independent
}  // namespace

void add(const float* a, const float* b, float* y, std::int64_t n) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) y[i] = a[i] + b[i];
  });
}

void scale(float* x, float alpha, std::int64_t n) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) x[i] *= alpha;
  });
}

void axpy(float alpha, const float* x, float* y, std::int64_t n) {
  parallel_chunks(n, kChunk, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) y[i] += alpha * x[i];
  });
}

void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols) {
  parallel_for(rows, rows * cols, [=](std::int64_t r) {
    float* row = y + r * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] += v[j];
  });
}

void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols) {
  // Threads split the columns, so each dv[j] sums its rows in order.
  constexpr std::int64_t kColBlock = 64;
  const std::int64_t blocks = (cols + kColBlock - 1) / kColBlock;
  parallel_for(blocks, rows * cols, [=](std::int64_t blk) {
    const std::int64_t j0 = blk * kColBlock, j1 = j0 + kColBlock < cols ? j0 + kColBlock : cols;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * cols;
      for (std::int64_t j = j0; j < j1; ++j) dv[j] += row[j];
    }
  });
}

namespace {
// Each fixed block [i0, i1) of [0, n) is reduced alone by block_value, then
// the partials are combined in block order: the result does not depend on
// the thread count.
template <typename T, typename BlockValue, typename Combine>
T blocked_reduce(std::int64_t n, T initial, BlockValue block_value, Combine combine) {
  const std::int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
  // The calling thread's buffer, kept from call to call (a reduction per row must not allocate); the
  // workers write into it through this reference.
  static thread_local std::vector<T> partials;
  std::vector<T>& partial = partials;
  partial.assign(static_cast<std::size_t>(blocks), T{});
  parallel_chunks(n, kReduceBlock, [&](std::int64_t i0, std::int64_t i1) {
    partial[static_cast<std::size_t>(i0 / kReduceBlock)] = block_value(i0, i1);
  });
  T total = initial;
  for (const T& p : partial) total = combine(total, p);
  return total;
}

double blocked_sum(std::int64_t n, auto block_sum) {
  return blocked_reduce(n, 0.0, block_sum, [](double a, double b) { return a + b; });
}

// Σ term(widened x[i]) for i in [i0, i1), in double: four vector accumulators
// (the add latency), then a fixed-order combination and a scalar tail.
template <typename Term>
double widened_block_sum(const float* x, std::int64_t i0, std::int64_t i1, Term term) {
  constexpr int kStep = vec_math::kDoubleWidth;
  vec_math::VecDouble acc[4] = {};
  std::int64_t i = i0;
  for (; i + 4 * kStep <= i1; i += 4 * kStep)
    for (int a = 0; a < 4; ++a) acc[a] += term(vec_math::load_widened(x + i + a * kStep));
  double total = vec_math::reduce_add((acc[0] + acc[1]) + (acc[2] + acc[3]));
  for (; i < i1; ++i) total += term(static_cast<double>(x[i]));
  return total;
}
}  // namespace

double sum(const float* x, std::int64_t n) {
  return blocked_sum(n, [x](std::int64_t i0, std::int64_t i1) {
    return widened_block_sum(x, i0, i1, [](auto v) { return v; });
  });
}

double sum_squares(const float* x, std::int64_t n) {
  return blocked_sum(n, [x](std::int64_t i0, std::int64_t i1) {
    return widened_block_sum(x, i0, i1, [](auto v) { return v * v; });
  });
}

float max_value(const float* x, std::int64_t n) { return vec_math::max(x, n); }

bool all_finite(const float* x, std::int64_t n) {
  // A float is ±inf or NaN exactly when its exponent bits are all ones; an
  // integer OR over the elements vectorises (a float sum would not).
  const std::uint32_t any_special = blocked_reduce(
      n, 0u,
      [x](std::int64_t i0, std::int64_t i1) {
        std::uint32_t special = 0;
        for (std::int64_t i = i0; i < i1; ++i) {
          const std::uint32_t exponent = std::bit_cast<std::uint32_t>(x[i]) & 0x7F800000u;
          special |= exponent == 0x7F800000u ? 1u : 0u;
        }
        return special;
      },
      [](std::uint32_t a, std::uint32_t b) { return a | b; });
  return any_special == 0;
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
