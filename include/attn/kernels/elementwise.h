// Elementwise arithmetic and reductions over flat float arrays. Each kernel is
// built per ISA and picked at run time (src/kernels/kernel_table.h). Threads:
// OpenMP over chunks or rows above ~16k elements, serial inside a parallel
// region; every result is the same for any thread count.
#pragma once
#include <cstdint>

namespace attn::kernels {

// a, b, y: [n]. y = a + b; y may alias a or b.
void add(const float* a, const float* b, float* y, std::int64_t n);

// x: [n]. x *= alpha.
void scale(float* x, float alpha, std::int64_t n);

// x, y: [n], not aliasing. y += alpha · x.
void axpy(float alpha, const float* x, float* y, std::int64_t n);

// y: [rows, cols], v: [cols], not aliasing. y[r, :] += v.
void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols);

// dy: [rows, cols], dv: [cols], not aliasing. dv += Σ_r dy[r, :] (the bias
// gradient), each column summed over its rows in order.
void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols);

// x: [n]. Σ x and Σ x², accumulated in double over fixed blocks, so that the
// result does not depend on the thread count.
double sum(const float* x, std::int64_t n);
double sum_squares(const float* x, std::int64_t n);

// x: [n]. The largest value; -inf for n == 0.
float max_value(const float* x, std::int64_t n);

// x: [n]. True when every value is finite (no NaN, no ±Inf).
bool all_finite(const float* x, std::int64_t n);

}  // namespace attn::kernels
