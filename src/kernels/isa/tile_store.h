// The first and last steps of the AVX-512 register tiles (FP32, gemm_tile.h,
// and bf16, lowp/bf16_tile.h): rows of two zmm accumulators (32 columns).
#pragma once
#include <cstdint>

#include "isa.h"

#if ATTN_AVX512
namespace attn::kernels::ATTN_ISA_NAMESPACE {

// The lanes of the first and second 16 columns that hold one of `cols` ≤ 32.
struct ColumnMasks {
  __mmask16 lo, hi;
};
inline ColumnMasks column_masks(int cols) {
  return {cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1), cols >= 32 ? __mmask16(0xFFFF)
                                                                        : cols <= 16
                                                                            ? __mmask16(0)
                                                                            : __mmask16((1u << (cols - 16)) - 1)};
}

// Zeroes the accumulators of kRows rows and starts fetching C's lines,
// which are touched only after the k loop.
template <int kRows>
[[gnu::always_inline]] inline void start_tile(__m512* lo, __m512* hi, const float* c, std::int64_t ldc, int cols) {
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    lo[r] = hi[r] = _mm512_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + cols - 1), _MM_HINT_T0);
  }
}

// C[r][0..cols) = alpha·acc + beta·C, or alpha·acc when beta == 0 (C is not
// read then, so NaN in it is ignored); lo[r], hi[r] hold row r's columns
// 0–15 and 16–31.
template <int kRows>
[[gnu::always_inline]] inline void store_tile(const __m512* lo, const __m512* hi, float* c, std::int64_t ldc,
                                              ColumnMasks masks, float alpha, float beta) {
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      _mm512_mask_storeu_ps(c + r * ldc, masks.lo, _mm512_mul_ps(va, lo[r]));
      _mm512_mask_storeu_ps(c + r * ldc + 16, masks.hi, _mm512_mul_ps(va, hi[r]));
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      float* row = c + r * ldc;
      const __m512 old_lo = _mm512_maskz_loadu_ps(masks.lo, row), old_hi = _mm512_maskz_loadu_ps(masks.hi, row + 16);
      _mm512_mask_storeu_ps(row, masks.lo, _mm512_fmadd_ps(va, lo[r], _mm512_mul_ps(vb, old_lo)));
      _mm512_mask_storeu_ps(row + 16, masks.hi, _mm512_fmadd_ps(va, hi[r], _mm512_mul_ps(vb, old_hi)));
    }
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
#endif
