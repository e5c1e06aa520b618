// SGEMM for a few rows of C with op(A) rows and op(B) columns both contiguous
// in k (A stored m×k, B stored n×k: the x·Wᵀ of a linear layer at decoding
// time). Each C element is a dot product over k, vectorised along k: packing
// B (a transpose) would cost more than the product itself here.
//   a: rows × k, rows lda apart; b: cols × k, cols ldb apart; c: rows × cols.
// The k sum runs in kDotLanes interleaved partial sums added in a fixed
// order, so it differs in rounding from the tiled path but not between runs
// or thread counts.
#pragma once
#include <cstdint>

#include "isa.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

inline constexpr int kDotMaxRows = 4;
inline constexpr int kDotCols = 8;  // B rows (C columns) sharing each load of A

#if ATTN_ISA_LEVEL == 2
ATTN_AVX512_WARNINGS_OFF
inline constexpr int kDotLanes = 16;

template <int kRows>
void gemm_dot_block(std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, int cols,
                    float* c, std::int64_t ldc, float alpha, float beta) {
  __m512 acc[kRows][kDotCols];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < kDotCols; ++j) acc[r][j] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < k; p += kDotLanes) {
    const __mmask16 mask = k - p >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - p)) - 1);
    __m512 bv[kDotCols];
#pragma GCC unroll 8
    for (int j = 0; j < kDotCols; ++j)
      bv[j] = j < cols ? _mm512_maskz_loadu_ps(mask, b + j * ldb + p) : _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 av = _mm512_maskz_loadu_ps(mask, a + r * lda + p);
#pragma GCC unroll 8
      for (int j = 0; j < kDotCols; ++j) acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < cols; ++j) {
      const float sum = _mm512_reduce_add_ps(acc[r][j]);
      float& out = c[r * ldc + j];
      out = beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
    }
}
ATTN_AVX512_WARNINGS_ON
#else
inline constexpr int kDotLanes = ATTN_ISA_LEVEL == 1 ? 8 : 4;

template <int kRows>
void gemm_dot_block(std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, int cols,
                    float* c, std::int64_t ldc, float alpha, float beta) {
  float acc[kRows][kDotCols][kDotLanes] = {};
  const std::int64_t k_full = k - k % kDotLanes;
  for (std::int64_t p = 0; p < k_full; p += kDotLanes)
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < cols; ++j)
        for (int q = 0; q < kDotLanes; ++q) acc[r][j][q] += a[r * lda + p + q] * b[j * ldb + p + q];
  for (std::int64_t p = k_full; p < k; ++p)
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < cols; ++j) acc[r][j][p - k_full] += a[r * lda + p] * b[j * ldb + p];
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (float v : acc[r][j]) sum += v;
      float& out = c[r * ldc + j];
      out = beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
    }
}
#endif

// C[rows × n] for rows ≤ kDotMaxRows.
inline void gemm_dot(int rows, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                     const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  using BlockFn = void (*)(std::int64_t, const float*, std::int64_t, const float*, std::int64_t, int, float*,
                           std::int64_t, float, float);
  constexpr BlockFn kBlocks[kDotMaxRows] = {&gemm_dot_block<1>, &gemm_dot_block<2>, &gemm_dot_block<3>,
                                            &gemm_dot_block<4>};
  for (std::int64_t j = 0; j < n; j += kDotCols) {
    const int cols = n - j < kDotCols ? static_cast<int>(n - j) : kDotCols;
    kBlocks[rows - 1](k, a, lda, b + j * ldb, ldb, cols, c + j, ldc, alpha, beta);
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
