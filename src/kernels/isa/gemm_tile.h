// SGEMM register tiles: the innermost kernel, one per ISA.
//
// A tile computes C[rows×cols] (rows ≤ kTileRows, cols ≤ kTileCols) from an
// A micro-panel and a B micro-panel over kc steps:
//   a: op(A)[r][p] = a[r·a_row_stride + p·a_step]; kPackedA panels are
//      kc × kTileRows floats (strides 1 and kTileRows, known at compile time)
//   b: kc rows of cols floats, b[p·b_step + j] = op(B)[p][j]; either packed
//      (b_step = kTileCols) or B itself when it is stored k×n (b_step = ldb)
// and then stores C = alpha·acc + beta·C, or C = alpha·acc when beta == 0
// (C is not read then, so NaN in it is ignored). Every element is one chain
// of fused multiply-adds in p order whatever its place in the tile, so the
// result does not depend on how C is cut into tiles or threads. kPartial
// tiles (cols < kTileCols) read and write only their cols columns.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "isa.h"
#include "tile_store.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

#if ATTN_ISA_LEVEL == 2
// 14 rows × 2 zmm: 28 accumulators + 2 B vectors of the 32 registers; the A
// values come in as embedded broadcasts.
inline constexpr int kTileRows = 14;
inline constexpr int kTileCols = 32;

template <int kRows, bool kPartial, bool kPackedA>
void gemm_tile(std::int64_t kc, const float* a, std::int64_t a_row_stride, std::int64_t a_step, const float* b,
               std::int64_t b_step, float* c, std::int64_t ldc, int cols, float alpha, float beta) {
  const std::int64_t a_rs = kPackedA ? 1 : a_row_stride, a_st = kPackedA ? kTileRows : a_step;
  const ColumnMasks masks = column_masks(cols);
  __m512 lo[kRows], hi[kRows];
  start_tile<kRows>(lo, hi, c, ldc, cols);
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m512 b_lo = kPartial ? _mm512_maskz_loadu_ps(masks.lo, b) : _mm512_loadu_ps(b);
    const __m512 b_hi = kPartial ? _mm512_maskz_loadu_ps(masks.hi, b + 16) : _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      const __m512 a_r = _mm512_set1_ps(a[r * a_rs]);
      lo[r] = _mm512_fmadd_ps(a_r, b_lo, lo[r]);
      hi[r] = _mm512_fmadd_ps(a_r, b_hi, hi[r]);
    }
    a += a_st;
    b += b_step;
  }
  store_tile<kRows>(lo, hi, c, ldc, masks, alpha, beta);
}

#elif ATTN_ISA_LEVEL == 1
// 6 rows × 2 ymm: 12 accumulators + 2 B vectors + 1 broadcast of 16 registers.
inline constexpr int kTileRows = 6;
inline constexpr int kTileCols = 16;

template <int kRows, bool kPartial, bool kPackedA>
void gemm_tile(std::int64_t kc, const float* a, std::int64_t a_row_stride, std::int64_t a_step, const float* b,
               std::int64_t b_step, float* c, std::int64_t ldc, int cols, float alpha, float beta) {
  const std::int64_t a_rs = kPackedA ? 1 : a_row_stride, a_st = kPackedA ? kTileRows : a_step;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask_lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), lane);
  const __m256i mask_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), lane);
  __m256 lo[kRows], hi[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m256 b_lo = kPartial ? _mm256_maskload_ps(b, mask_lo) : _mm256_loadu_ps(b);
    const __m256 b_hi = kPartial ? _mm256_maskload_ps(b + 8, mask_hi) : _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 a_r = _mm256_broadcast_ss(a + r * a_rs);
      lo[r] = _mm256_fmadd_ps(a_r, b_lo, lo[r]);
      hi[r] = _mm256_fmadd_ps(a_r, b_hi, hi[r]);
    }
    a += a_st;
    b += b_step;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  if (!kPartial) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      float* row = c + r * ldc;
      if (beta == 0.0f) {
        _mm256_storeu_ps(row, _mm256_mul_ps(va, lo[r]));
        _mm256_storeu_ps(row + 8, _mm256_mul_ps(va, hi[r]));
      } else {
        _mm256_storeu_ps(row, _mm256_fmadd_ps(va, lo[r], _mm256_mul_ps(vb, _mm256_loadu_ps(row))));
        _mm256_storeu_ps(row + 8, _mm256_fmadd_ps(va, hi[r], _mm256_mul_ps(vb, _mm256_loadu_ps(row + 8))));
      }
    }
    return;
  }
  // Partial tile: through a buffer, with the same arithmetic per element.
  alignas(32) float acc[kRows][kTileCols];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    _mm256_store_ps(acc[r], lo[r]);
    _mm256_store_ps(acc[r] + 8, hi[r]);
  }
  for (int r = 0; r < kRows; ++r) {
    float* row = c + r * ldc;
    for (int j = 0; j < cols; ++j)
      row[j] = beta == 0.0f ? alpha * acc[r][j] : std::fma(alpha, acc[r][j], beta * row[j]);
  }
}

#else
// Plain C++; the compiler vectorises the column loop with what the baseline has.
inline constexpr int kTileRows = 4;
inline constexpr int kTileCols = 8;

template <int kRows, bool kPartial, bool kPackedA>
void gemm_tile(std::int64_t kc, const float* a, std::int64_t a_row_stride, std::int64_t a_step, const float* b,
               std::int64_t b_step, float* c, std::int64_t ldc, int cols, float alpha, float beta) {
  const std::int64_t a_rs = kPackedA ? 1 : a_row_stride, a_st = kPackedA ? kTileRows : a_step;
  float acc[kRows][kTileCols] = {};
  const int width = kPartial ? cols : kTileCols;
  for (std::int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < width; ++j) acc[r][j] += a[r * a_rs] * b[j];
    a += a_st;
    b += b_step;
  }
  for (int r = 0; r < kRows; ++r) {
    float* row = c + r * ldc;
    for (int j = 0; j < cols; ++j) row[j] = beta == 0.0f ? alpha * acc[r][j] : alpha * acc[r][j] + beta * row[j];
  }
}
#endif

using GemmTileFn = void (*)(std::int64_t, const float*, std::int64_t, std::int64_t, const float*, std::int64_t, float*,
                            std::int64_t, int, float, float);

// gemm_tile<rows, partial, packed_a> for rows = 1..kTileRows, indexed
// [packed_a][partial][rows − 1].
template <bool kPartial, bool kPackedA, std::size_t... I>
constexpr std::array<GemmTileFn, sizeof...(I)> make_gemm_tiles(std::index_sequence<I...>) {
  return {&gemm_tile<static_cast<int>(I) + 1, kPartial, kPackedA>...};
}
using GemmTileRow = std::array<GemmTileFn, kTileRows>;
inline constexpr std::array<std::array<GemmTileRow, 2>, 2> kGemmTiles = {
    std::array<GemmTileRow, 2>{make_gemm_tiles<false, false>(std::make_index_sequence<kTileRows>{}),
                               make_gemm_tiles<true, false>(std::make_index_sequence<kTileRows>{})},
    std::array<GemmTileRow, 2>{make_gemm_tiles<false, true>(std::make_index_sequence<kTileRows>{}),
                               make_gemm_tiles<true, true>(std::make_index_sequence<kTileRows>{})}};

inline GemmTileFn gemm_tile_for(int rows, int cols, bool packed_a) {
  return kGemmTiles[packed_a][cols < kTileCols][rows - 1];
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
