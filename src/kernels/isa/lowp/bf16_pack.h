// bf16 packing: converts a kc-long strip of op(A) rows or op(B) columns to
// bf16 pairs in the micro-panel layout the bf16 register tile reads.
//
// A panel of width W holds `width` ≤ W lines over kc steps, as kp = ⌈kc/2⌉
// pairs: out[q·W + r] = bf16(line r, step 2q) | bf16(line r, step 2q + 1) << 16,
// where line r step p is src[r·line_stride + p·step_stride]; a missing odd
// step and lines r ≥ width are zero. Conversion: kernels::bf16_bits, in
// vector form at the AVX-512 levels (bitwise the same).
#pragma once
#include <cstdint>

#include "../isa.h"
#include "attn/kernels/gemm_bf16.h"
#if ATTN_AVX512
#include "../gemm_pack.h"
#endif

namespace attn::kernels::ATTN_ISA_NAMESPACE {

template <int W>
void pack_bf16_generic(const float* src, std::int64_t line_stride, std::int64_t step_stride, int width, std::int64_t kc,
                       std::uint32_t* out) {
  for (std::int64_t q = 0; 2 * q < kc; ++q) {
    const float* s = src + 2 * q * step_stride;
    const bool has_odd = 2 * q + 1 < kc;
    std::uint32_t* o = out + q * W;
    for (int r = 0; r < width; ++r) {
      const std::uint32_t even = bf16_bits(s[r * line_stride]);
      const std::uint32_t odd = has_odd ? bf16_bits(s[r * line_stride + step_stride]) : 0u;
      o[r] = even | odd << 16;
    }
    for (int r = width; r < W; ++r) o[r] = 0;
  }
}

#if ATTN_AVX512
ATTN_AVX512_WARNINGS_OFF
#if ATTN_BF16
// vcvtneps2bf16 rounds to nearest even, quiets a NaN keeping its sign and top
// payload bits, and reads a denormal as a signed zero: bf16_bits bit for bit
// (tested on every pack path), in one instruction. Packing the
// activations was a quarter of bf16 training's time (perf, transformer).
inline __m512i bf16_bits16(__m512 x) { return _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x))); }

inline __m512i bf16_pairs16(const float* s, std::int64_t steps) {
  const __m512 lo = _mm512_maskz_loadu_ps(low_lanes(steps > 0 ? steps : 0), s);
  const __m512 hi = _mm512_maskz_loadu_ps(low_lanes(steps > 16 ? steps - 16 : 0), s + 16);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
}
#else
// bf16_bits of 16 floats, one per 32-bit lane (high half zero).
inline __m512i bf16_bits16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i high = _mm512_srli_epi32(u, 16);
  const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), _mm512_and_si512(high, _mm512_set1_epi32(1)));
  __m512i bits = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
  bits = _mm512_mask_mov_epi32(bits, nan, _mm512_or_si512(high, _mm512_set1_epi32(0x0040)));
  const __mmask16 tiny = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7F800000));
  return _mm512_mask_mov_epi32(bits, tiny, _mm512_and_si512(high, _mm512_set1_epi32(0x8000)));
}

// 32 consecutive steps of one line (fewer when `steps` < 32; the rest read
// as zero) as 16 pairs.
inline __m512i bf16_pairs16(const float* s, std::int64_t steps) {
  const __m512i lo = bf16_bits16(_mm512_maskz_loadu_ps(low_lanes(steps > 0 ? steps : 0), s));
  const __m512i hi = bf16_bits16(_mm512_maskz_loadu_ps(low_lanes(steps > 16 ? steps - 16 : 0), s + 16));
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(lo)), _mm512_cvtepi32_epi16(hi), 1);
}
#endif

// Lines contiguous along k (step stride 1): 16 lines × 16 pairs, transposed in registers.
template <int W>
void pack_bf16_transpose(const float* src, std::int64_t line_stride, int width, std::int64_t kc, std::uint32_t* out) {
  for (int g = 0; g * 16 < W; ++g) {
    const int lines = width - 16 * g < 16 ? (width - 16 * g > 0 ? width - 16 * g : 0) : 16;
    const __mmask16 store_mask = low_lanes(W - 16 * g);
    for (std::int64_t p0 = 0; p0 < kc; p0 += 32) {
      __m512 v[16];
      for (int r = 0; r < 16; ++r)
        v[r] = r < lines ? _mm512_castsi512_ps(bf16_pairs16(src + (16 * g + r) * line_stride + p0, kc - p0))
                         : _mm512_setzero_ps();
      transpose16(v);
      const std::int64_t pairs = (kc - p0 + 1) / 2 < 16 ? (kc - p0 + 1) / 2 : 16;
      for (std::int64_t q = 0; q < pairs; ++q)
        _mm512_mask_storeu_ps(reinterpret_cast<float*>(out + (p0 / 2 + q) * W + 16 * g), store_mask, v[q]);
    }
  }
}

// Consecutive lines contiguous (line stride 1): two steps' rows interleaved.
template <int W>
void pack_bf16_interleave(const float* src, std::int64_t step_stride, int width, std::int64_t kc, std::uint32_t* out) {
  for (int g = 0; g * 16 < W; ++g) {
    const __mmask16 load_mask = low_lanes(width - 16 * g > 0 ? width - 16 * g : 0);
    const __mmask16 store_mask = low_lanes(W - 16 * g);
    for (std::int64_t q = 0; 2 * q < kc; ++q) {
      const float* s = src + 2 * q * step_stride + 16 * g;
      const __m512i even = bf16_bits16(_mm512_maskz_loadu_ps(load_mask, s));
      const __m512i odd = 2 * q + 1 < kc ? bf16_bits16(_mm512_maskz_loadu_ps(load_mask, s + step_stride))
                                         : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(out + q * W + 16 * g, store_mask, _mm512_or_si512(even, _mm512_slli_epi32(odd, 16)));
    }
  }
}

ATTN_AVX512_WARNINGS_ON
#endif

template <int W>
void pack_bf16(const float* src, std::int64_t line_stride, std::int64_t step_stride, int width, std::int64_t kc,
               std::uint32_t* out) {
#if ATTN_AVX512
  if (step_stride == 1) return pack_bf16_transpose<W>(src, line_stride, width, kc, out);
  if (line_stride == 1) return pack_bf16_interleave<W>(src, step_stride, width, kc, out);
#endif
  pack_bf16_generic<W>(src, line_stride, step_stride, width, kc, out);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
