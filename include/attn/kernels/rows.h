// Dots and weighted sums over rows spaced `stride` floats apart (the keys or
// values of one head at consecutive positions): the inner loops of windowed
// attention. Each is built per ISA and picked at run time
// (src/kernels/kernel_table.h). Single-threaded: callers run them inside their own
// parallel loops.
#pragma once
#include <cstdint>

namespace attn::kernels {

// a: [n]; rows: count rows of n, stride apart; out: [count].
// out[c] = scale · Σ_x a[x] · rows[c·stride + x], c < count, x < n.
void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out);

// coef: [count]; rows: count rows of n, stride apart; y: [n], aliasing neither.
// y[x] += Σ_c coef[c] · rows[c·stride + x], x < n.
void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y);

}  // namespace attn::kernels
