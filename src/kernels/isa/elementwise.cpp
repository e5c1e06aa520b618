// Elementwise kernels, written as plain loops the compiler vectorises for the
// ISA this file is compiled for. Threads only above a size where they pay off.
#include "isa.h"

#include <cmath>
#include <limits>
#include <vector>

namespace attn::kernels::ATTN_ISA_NAMESPACE {
#include "elementwise.inc"

namespace {
constexpr std::int64_t kParallelMin = 1 << 15;  // below this, threads cost more than they give
constexpr std::int64_t kReduceBlock = 4096;     // fixed blocks keep reductions thread-count independent
}  // namespace

void add(const float* a, const float* b, float* y, std::int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void scale(float* x, float alpha, std::int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

void axpy(float alpha, const float* x, float* y, std::int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = y + r * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] += v[j];
  }
}

void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols) {
  // Threads split the columns, so each dv[j] sums its rows in order.
  constexpr std::int64_t kColBlock = 64;
  const std::int64_t blocks = (cols + kColBlock - 1) / kColBlock;
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMin)
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    const std::int64_t j0 = blk * kColBlock, j1 = j0 + kColBlock < cols ? j0 + kColBlock : cols;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * cols;
      for (std::int64_t j = j0; j < j1; ++j) dv[j] += row[j];
    }
  }
}

namespace {
template <typename BlockFn>
double blocked_sum(std::int64_t n, BlockFn block_sum) {
  // Each fixed block is summed alone, then the partials are added in block
  // order: the result does not depend on the thread count.
  const std::int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
  std::vector<double> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    const std::int64_t i0 = blk * kReduceBlock, i1 = i0 + kReduceBlock < n ? i0 + kReduceBlock : n;
    partial[static_cast<std::size_t>(blk)] = block_sum(i0, i1);
  }
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}
}  // namespace

double sum(const float* x, std::int64_t n) {
  return blocked_sum(n, [x](std::int64_t i0, std::int64_t i1) {
    double s = 0.0;
    for (std::int64_t i = i0; i < i1; ++i) s += x[i];
    return s;
  });
}

double sum_squares(const float* x, std::int64_t n) {
  return blocked_sum(n, [x](std::int64_t i0, std::int64_t i1) {
    double s = 0.0;
    for (std::int64_t i = i0; i < i1; ++i) s += static_cast<double>(x[i]) * x[i];
    return s;
  });
}

float max_value(const float* x, std::int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

bool all_finite(const float* x, std::int64_t n) {
  // x - x is 0 for finite x and NaN for ±Inf and NaN; summing is branch-free.
  float acc = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) acc += x[i] - x[i];
  return acc == 0.0f;
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
