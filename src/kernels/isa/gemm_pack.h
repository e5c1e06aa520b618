// SGEMM packing: copies a kc-long strip of op(A) rows or op(B) columns into
// the contiguous micro-panel layout the register tile reads.
//
// A panel of width W holds `width` ≤ W lines (rows of op(A), or columns of
// op(B)) over kc steps: out[p·W + r] = src[r·line_stride + p·step_stride],
// zero for r ≥ width. One of the two strides is 1 in every layout: step
// stride 1 means a transpose (A in NN/NT, B in NT/TT), line stride 1 a copy
// (A in TN/TT, B in NN/TN).
#pragma once
#include <cstdint>

#include "isa.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

template <int W>
void pack_panel_generic(const float* src, std::int64_t line_stride, std::int64_t step_stride, int width,
                        std::int64_t kc, float* out) {
  for (std::int64_t p = 0; p < kc; ++p) {
    const float* s = src + p * step_stride;
    float* o = out + p * W;
    for (int r = 0; r < width; ++r) o[r] = s[r * line_stride];
    for (int r = width; r < W; ++r) o[r] = 0.0f;
  }
}

#if ATTN_AVX512
ATTN_AVX512_WARNINGS_OFF
// In-register transpose of 16 rows of 16 floats: v[i][j] becomes v[j][i].
inline void transpose16(__m512 v[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane L: rows 4i..4i+3 of column 4L + c.
  __m512 u[16];
  for (int i = 0; i < 4; ++i) {
    const __m512d t0 = _mm512_castps_pd(t[4 * i]), t1 = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * i + 2]), t3 = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  // Transpose the 4×4 grid of 128-bit lanes formed by u[c], u[4+c], u[8+c], u[12+c].
  for (int c = 0; c < 4; ++c) {
    const __m512 w0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), w1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44);
    const __m512 w3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
    v[c] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    v[4 + c] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
    v[8 + c] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    v[12 + c] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
  }
}

inline __mmask16 low_lanes(std::int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

// Transpose case (step stride 1): 16 steps × up to 16 lines per block.
template <int W>
void pack_panel_transpose(const float* src, std::int64_t line_stride, int width, std::int64_t kc, float* out) {
  for (int g = 0; g * 16 < W; ++g) {
    const int lines = width - 16 * g < 16 ? (width - 16 * g > 0 ? width - 16 * g : 0) : 16;
    const __mmask16 store_mask = low_lanes(W - 16 * g);
    for (std::int64_t p0 = 0; p0 < kc; p0 += 16) {
      const __mmask16 step_mask = low_lanes(kc - p0);
      __m512 v[16];
      for (int r = 0; r < 16; ++r)
        v[r] = r < lines ? _mm512_maskz_loadu_ps(step_mask, src + (16 * g + r) * line_stride + p0)
                         : _mm512_setzero_ps();
      transpose16(v);
      const int steps = kc - p0 < 16 ? static_cast<int>(kc - p0) : 16;
      for (int p = 0; p < steps; ++p) _mm512_mask_storeu_ps(out + (p0 + p) * W + 16 * g, store_mask, v[p]);
    }
  }
}

// Copy case (line stride 1).
template <int W>
void pack_panel_copy(const float* src, std::int64_t step_stride, int width, std::int64_t kc, float* out) {
  for (int g = 0; g * 16 < W; ++g) {
    const __mmask16 load_mask = low_lanes(width - 16 * g > 0 ? width - 16 * g : 0);
    const __mmask16 store_mask = low_lanes(W - 16 * g);
    const float* s = src + 16 * g;
    float* o = out + 16 * g;
    for (std::int64_t p = 0; p < kc; ++p)
      _mm512_mask_storeu_ps(o + p * W, store_mask, _mm512_maskz_loadu_ps(load_mask, s + p * step_stride));
  }
}

ATTN_AVX512_WARNINGS_ON
#endif

template <int W>
void pack_panel(const float* src, std::int64_t line_stride, std::int64_t step_stride, int width, std::int64_t kc,
                float* out) {
#if ATTN_AVX512
  if (step_stride == 1) return pack_panel_transpose<W>(src, line_stride, width, kc, out);
  if (line_stride == 1) return pack_panel_copy<W>(src, step_stride, width, kc, out);
#endif
  pack_panel_generic<W>(src, line_stride, step_stride, width, kc, out);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
