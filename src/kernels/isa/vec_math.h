// Vectorisable math for the per-ISA kernels: exp, sigmoid, and fixed-lane
// reductions, written as plain C++ that GCC turns into SIMD code at -O3
// without -ffast-math.
//
// Everything here lives in the ISA's own namespace: the same inline function
// compiled with different target flags must never be merged by the linker.
//
// Reductions keep kLanes independent partial results and combine them in a
// fixed tree, so a reduction's value depends only on the data, never on the
// thread count (and, for sums without FMA, not even on the ISA).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "isa.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE::vec_math {

// Enough lanes to fill a zmm register (and two ymm, or four xmm).
inline constexpr int kLanes = 16;

// a·b + c, fused where the ISA has FMA (the scalar build has no FMA unit, and
// std::fma there would be a library call per element). -std=c++20 turns off
// automatic contraction, so it is spelled out.
inline float mul_add(float a, float b, float c) {
#if ATTN_ISA_LEVEL >= 1
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// e^x with a relative error of about 2 ulp. Results below 2^-125.5 (x below
// about −86.99) are flushed to exactly 0, so no subnormal is ever produced;
// above ln(FLT_MAX) the result is +inf; NaN stays NaN.
//
// e^x = 2 · 2^(n−1) · e^r with n = round(x / ln2), |r| ≤ ln2 / 2; e^r by
// its Taylor series to degree 7 (truncation error < 6e-9 relative); 2^(n−1)
// built directly in the exponent bits (n − 1 ≤ 127 even where e^x overflows).
// Only selects, no branches, so that loops calling this vectorise (GCC does
// not if-convert trapping float arithmetic).
inline float exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // ln2 split so that n · kLn2Hi is exact for |n| < 2^9.
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  // Adding 1.5 · 2^23 rounds to an integer in float arithmetic and leaves
  // that integer in the low mantissa bits.
  constexpr float kRoundMagic = 12582912.0f;
  constexpr float kMin = -87.5f;  // n = −126: the exponent bits of 2^(n−1) become 0, so it reads as 0
  constexpr float kMax = 88.73f;  // just above ln(FLT_MAX): n ≤ 128, and the product overflows to inf

  const float clamped = x < kMin ? kMin : (x > kMax ? kMax : x);  // NaN passes through
  const float shifted = mul_add(clamped, kLog2e, kRoundMagic);
  const float n = shifted - kRoundMagic;
  float r = mul_add(n, -kLn2Hi, clamped);
  r = mul_add(n, -kLn2Lo, r);

  float p = 1.0f / 5040.0f;
  p = mul_add(p, r, 1.0f / 720.0f);
  p = mul_add(p, r, 1.0f / 120.0f);
  p = mul_add(p, r, 1.0f / 24.0f);
  p = mul_add(p, r, 1.0f / 6.0f);
  p = mul_add(p, r, 0.5f);
  p = mul_add(p, r, 1.0f);
  p = mul_add(p, r, 1.0f);

  // bits(shifted) = bits(kRoundMagic) + n, and bits(kRoundMagic) << 23
  // vanishes modulo 2^32, so this is (n − 1 + 127) << 23: the bits of
  // 2^(n−1), and 0 for n = −126.
  const std::uint32_t half_scale_bits = (std::bit_cast<std::uint32_t>(shifted) + 126u) << 23;
  return (2.0f * p) * std::bit_cast<float>(half_scale_bits);
}

// 1 / (1 + e^−x), accurate in relative terms on both tails.
inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// Σ_i term(i) for i < n, accumulated in kLanes float lanes combined in a
// fixed tree; term is inlined, so the loop vectorises when term does.
template <typename Term>
inline float sum_of(std::int64_t n, Term term) {
  float lane[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += term(i + k);
  for (int k = 0; i < n; ++i, ++k) lane[k] += term(i);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lane[k] += lane[k + width];
  return lane[0];
}

// Σ x[i] over x: [n].
inline float sum(const float* x, std::int64_t n) {
  return sum_of(n, [x](std::int64_t i) { return x[i]; });
}

// Σ x[i] · y[i] over x, y: [n].
inline float dot(const float* x, const float* y, std::int64_t n) {
  return sum_of(n, [x, y](std::int64_t i) { return x[i] * y[i]; });
}

// max x[i] for n ≥ 1 (−inf for n == 0). NaNs are skipped unless all are NaN.
inline float max(const float* x, std::int64_t n) {
  float lane[kLanes];
  for (float& m : lane) m = -std::numeric_limits<float>::infinity();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] = x[i + k] > lane[k] ? x[i + k] : lane[k];
  for (int k = 0; i < n; ++i, ++k) lane[k] = x[i] > lane[k] ? x[i] : lane[k];
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lane[k] = lane[k + width] > lane[k] ? lane[k + width] : lane[k];
  return lane[0];
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE::vec_math
