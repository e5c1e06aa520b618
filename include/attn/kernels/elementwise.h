// Elementwise arithmetic and reductions over flat float arrays.
#pragma once
#include <cstdint>

namespace attn::kernels {

void add(const float* a, const float* b, float* y, std::int64_t n);      // y = a + b (y may alias)
void scale(float* x, float alpha, std::int64_t n);                         // x *= alpha
void axpy(float alpha, const float* x, float* y, std::int64_t n);          // y += alpha · x
void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols);  // y[r, :] += v
// dv += Σ_r dy[r, :] (the bias gradient); dy: [rows, cols], dv: [cols].
void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols);

// Reductions accumulate in double; a fixed blocking makes them independent
// of the thread count.
double sum(const float* x, std::int64_t n);
double sum_squares(const float* x, std::int64_t n);
float max_value(const float* x, std::int64_t n);  // -inf for n == 0
// True when every value is finite (no NaN, no ±Inf).
bool all_finite(const float* x, std::int64_t n);

}  // namespace attn::kernels
