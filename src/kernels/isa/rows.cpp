// Strided row kernels, compiled once per ISA: plain loops the compiler
// vectorises over the row length with the ISA's widest registers.
#include "isa.h"

#include "attn/kernels/rows.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {
ATTN_ROWS_KERNELS(ATTN_DECLARE_KERNEL)

// Four rows per pass give four independent accumulator chains (one dot of 64
// floats alone is bound by the add latency); `omp simd reduction` lets the
// compiler vectorise the sums over n, in a fixed order.
void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out) {
  std::int64_t c = 0;
  for (; c + 4 <= count; c += 4) {
    const float* r0 = rows + c * stride;  // [n] each
    const float* r1 = r0 + stride;
    const float* r2 = r1 + stride;
    const float* r3 = r2 + stride;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (std::int64_t x = 0; x < n; ++x) {
      s0 += a[x] * r0[x];
      s1 += a[x] * r1[x];
      s2 += a[x] * r2[x];
      s3 += a[x] * r3[x];
    }
    out[c] = scale * s0;
    out[c + 1] = scale * s1;
    out[c + 2] = scale * s2;
    out[c + 3] = scale * s3;
  }
  for (; c < count; ++c) {
    const float* r0 = rows + c * stride;
    float s0 = 0.0f;
#pragma omp simd reduction(+ : s0)
    for (std::int64_t x = 0; x < n; ++x) s0 += a[x] * r0[x];
    out[c] = scale * s0;
  }
}

// Four rows per pass, so y is loaded and stored once per four rows.
void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y) {
  std::int64_t c = 0;
  for (; c + 4 <= count; c += 4) {
    const float a0 = coef[c], a1 = coef[c + 1], a2 = coef[c + 2], a3 = coef[c + 3];
    const float* r0 = rows + c * stride;  // [n] each
    const float* r1 = r0 + stride;
    const float* r2 = r1 + stride;
    const float* r3 = r2 + stride;
#pragma omp simd
    for (std::int64_t x = 0; x < n; ++x) y[x] += a0 * r0[x] + a1 * r1[x] + a2 * r2[x] + a3 * r3[x];
  }
  for (; c < count; ++c) {
    const float a0 = coef[c];
    const float* r0 = rows + c * stride;
#pragma omp simd
    for (std::int64_t x = 0; x < n; ++x) y[x] += a0 * r0[x];
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
