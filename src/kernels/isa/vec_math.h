// SIMD building blocks for the per-ISA kernels: a float vector as wide as the
// ISA's registers (GCC vector extensions: 16 lanes for AVX-512, 8 for AVX2,
// 4 for the SSE2 baseline), loads and stores with partial tails, reductions
// in a fixed order, and exp / sigmoid that work on a float or a whole vector.
// No -ffast-math: every operation is the IEEE one, in an order fixed by the
// code, so a result depends on the data and the ISA, never on the threads.
//
// Everything lives in the ISA's own namespace: the same inline function
// compiled with different target flags must never be merged by the linker.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "isa.h"

#if ATTN_ISA_LEVEL == 0
#include <emmintrin.h>  // SSE2, the x86-64 baseline
#endif

namespace attn::kernels::ATTN_ISA_NAMESPACE::vec_math {

#if ATTN_ISA_LEVEL == 2
inline constexpr int kWidth = 16;
#elif ATTN_ISA_LEVEL == 1
inline constexpr int kWidth = 8;
#else
inline constexpr int kWidth = 4;
#endif

using Vec = float __attribute__((vector_size(kWidth * sizeof(float))));
using VecBits = std::uint32_t __attribute__((vector_size(kWidth * sizeof(float))));

inline Vec splat(float x) { return Vec{} + x; }

// p: [kWidth], any alignment.
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// p: [count], 0 ≤ count < kWidth; the missing lanes read as fill. Masked
// loads and stores never touch memory past p + count.
inline Vec load_partial(const float* p, std::int64_t count, float fill) {
#if ATTN_ISA_LEVEL == 2
  const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1u);
  return _mm512_mask_loadu_ps(splat(fill), mask, p);
#elif ATTN_ISA_LEVEL == 1
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
  return _mm256_blendv_ps(splat(fill), _mm256_maskload_ps(p, mask), _mm256_castsi256_ps(mask));
#else
  float lanes[kWidth];
  for (int k = 0; k < kWidth; ++k) lanes[k] = k < count ? p[k] : fill;
  return load(lanes);
#endif
}
// p: [count], 0 ≤ count < kWidth; only the first count lanes are written.
inline void store_partial(float* p, Vec v, std::int64_t count) {
#if ATTN_ISA_LEVEL == 2
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << count) - 1u), v);
#elif ATTN_ISA_LEVEL == 1
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  _mm256_maskstore_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane), v);
#else
  float lanes[kWidth];
  store(lanes, v);
  for (int k = 0; k < count; ++k) p[k] = lanes[k];
#endif
}

// a·b + c, fused where the ISA has FMA (the scalar build has no FMA unit,
// and std::fma there would be a library call).
inline float mul_add(float a, float b, float c) {
#if ATTN_ISA_LEVEL >= 1
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
inline Vec mul_add(Vec a, Vec b, Vec c) {
#if ATTN_ISA_LEVEL == 2
  return _mm512_fmadd_ps(a, b, c);
#elif ATTN_ISA_LEVEL == 1
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}

// Larger of a and b; NaN in a propagates.
inline float max(float a, float b) { return b > a ? b : a; }
inline Vec max(Vec a, Vec b) { return b > a ? b : a; }

// Σ or max of the lanes, combined in a fixed tree.
inline float reduce_add(Vec v) {
  float lanes[kWidth];
  store(lanes, v);
  for (int width = kWidth / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  return lanes[0];
}
inline float reduce_max(Vec v) {
  float lanes[kWidth];
  store(lanes, v);
  for (int width = kWidth / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] = max(lanes[k], lanes[k + width]);
  return lanes[0];
}

namespace detail {
inline Vec from_bits(VecBits bits) { return std::bit_cast<Vec>(bits); }
inline float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }
inline VecBits to_bits(Vec v) { return std::bit_cast<VecBits>(v); }
inline std::uint32_t to_bits(float v) { return std::bit_cast<std::uint32_t>(v); }

// e^x for a float or a Vec; see exp(). Always inlined: a call inside a loop
// would stop GCC vectorising it.
template <typename T>
[[gnu::always_inline]] inline T exp(T x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // ln2 split so that n · kLn2Hi is exact for |n| < 2^9.
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  // Adding 1.5 · 2^23 rounds to an integer in float arithmetic and leaves
  // that integer in the low mantissa bits.
  constexpr float kRoundMagic = 12582912.0f;
  constexpr float kMin = -87.5f;             // n = −126: the exponent bits of 2^(n−1) become 0, so it reads as 0
  constexpr float kMax = 88.73f;             // just above ln(FLT_MAX): n ≤ 128, and the product overflows to inf
  auto k = [](float v) { return T{} + v; };  // a constant as a T

  // Clamped from below, then above; NaN passes through both.
  T clamped = max(x, k(kMin));
  clamped = k(kMax) < clamped ? k(kMax) : clamped;
  const T shifted = mul_add(clamped, k(kLog2e), k(kRoundMagic));
  const T n = shifted - kRoundMagic;
  T r = mul_add(n, k(-kLn2Hi), clamped);
  r = mul_add(n, k(-kLn2Lo), r);

  // e^r by its Taylor series to degree 7: truncation error < 6e-9 relative
  // for |r| ≤ ln2 / 2.
  T p = k(1.0f / 5040.0f);
  p = mul_add(p, r, k(1.0f / 720.0f));
  p = mul_add(p, r, k(1.0f / 120.0f));
  p = mul_add(p, r, k(1.0f / 24.0f));
  p = mul_add(p, r, k(1.0f / 6.0f));
  p = mul_add(p, r, k(0.5f));
  p = mul_add(p, r, k(1.0f));
  p = mul_add(p, r, k(1.0f));

  // bits(shifted) = bits(kRoundMagic) + n, and bits(kRoundMagic) << 23
  // vanishes modulo 2^32, so this is (n − 1 + 127) << 23: the bits of
  // 2^(n−1), and 0 for n = −126.
  const auto half_scale_bits = (to_bits(shifted) + 126u) << 23;
  return (p + p) * from_bits(half_scale_bits);
}
}  // namespace detail

// e^x with a relative error of about 2 ulp. Results below 2^-125.5 (x below
// about −86.99) are flushed to exactly 0, so no subnormal is ever produced;
// above ln(FLT_MAX) the result is +inf; NaN stays NaN.
//
// e^x = 2 · 2^(n−1) · e^r with n = round(x / ln2), |r| ≤ ln2 / 2, and 2^(n−1)
// built in the exponent bits (n − 1 ≤ 127 even where e^x overflows). No
// branches, so loops calling the float version vectorise too.
[[gnu::always_inline]] inline float exp(float x) { return detail::exp(x); }
[[gnu::always_inline]] inline Vec exp(Vec x) { return detail::exp(x); }

// 1 / (1 + e^−x), accurate in relative terms on both tails.
[[gnu::always_inline]] inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }
[[gnu::always_inline]] inline Vec sigmoid(Vec x) { return 1.0f / (1.0f + exp(-x)); }

// x[k] = sqrt(x[k]) for k < kWidth, with the ISA's packed square root.
// (GCC will not vectorise std::sqrt in a loop while -fmath-errno is on, and
// the optimize attribute does not turn it off.) Correctly rounded, so it
// agrees bit for bit with std::sqrt.
inline Vec sqrt(Vec v) {
#if ATTN_ISA_LEVEL == 2
  // The masked form: _mm512_sqrt_ps trips GCC 12's -Wmaybe-uninitialized.
  return _mm512_mask_sqrt_ps(v, static_cast<__mmask16>(0xFFFF), v);
#elif ATTN_ISA_LEVEL == 1
  return _mm256_sqrt_ps(v);
#else
  return _mm_sqrt_ps(v);
#endif
}

// Doubles: kWidth / 2 lanes, the same register width as Vec.
using VecDouble = double __attribute__((vector_size(kWidth * sizeof(float))));
inline constexpr int kDoubleWidth = kWidth / 2;

// p: [kDoubleWidth] floats, widened to doubles.
inline VecDouble load_widened(const float* p) {
  using HalfVec = float __attribute__((vector_size(kDoubleWidth * sizeof(float))));
  HalfVec half;
  std::memcpy(&half, p, sizeof half);
  return __builtin_convertvector(half, VecDouble);
}

inline double reduce_add(VecDouble v) {
  double lanes[kDoubleWidth];
  std::memcpy(lanes, &v, sizeof v);
  for (int width = kDoubleWidth / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  return lanes[0];
}

// Σ_i term(i) for i < n, where term(i) gives the Vec of elements i .. i +
// kWidth − 1 and tail(i, count) the last, partial one (its missing lanes 0).
// Two accumulators hide the add latency; the order is fixed.
template <typename Term, typename Tail>
inline float sum_of(std::int64_t n, Term term, Tail tail) {
  Vec acc0 = Vec{}, acc1 = Vec{};
  std::int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
    acc0 += term(i);
    acc1 += term(i + kWidth);
  }
  if (i + kWidth <= n) {
    acc0 += term(i);
    i += kWidth;
  }
  if (i < n) acc1 += tail(i, n - i);
  return reduce_add(acc0 + acc1);
}

// Σ x[i] over x: [n].
inline float sum(const float* x, std::int64_t n) {
  return sum_of(
      n, [x](std::int64_t i) { return load(x + i); },
      [x](std::int64_t i, std::int64_t count) { return load_partial(x + i, count, 0.0f); });
}

// Σ x[i] · y[i] over x, y: [n].
inline float dot(const float* x, const float* y, std::int64_t n) {
  return sum_of(
      n, [x, y](std::int64_t i) { return load(x + i) * load(y + i); },
      [x, y](std::int64_t i, std::int64_t count) {
        return load_partial(x + i, count, 0.0f) * load_partial(y + i, count, 0.0f);
      });
}

// max x[i] over x: [n] (−inf for n == 0). NaNs are passed over.
inline float max(const float* x, std::int64_t n) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  Vec acc = splat(kLowest);
  std::int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) acc = max(acc, load(x + i));
  if (i < n) acc = max(acc, load_partial(x + i, n - i, kLowest));
  return reduce_max(acc);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE::vec_math
