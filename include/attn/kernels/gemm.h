// SGEMM: packed, cache-blocked, register-tiled, OpenMP over tiles; one
// source per ISA (src/kernels/isa/gemm.cpp), chosen at run time. The model's
// products call sgemm / sgemm_batched, which run in the process's GEMM
// precision: FP32 (sgemm_fp32) or bf16 operands (gemm_bf16, gemm_bf16.h).
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

namespace attn::kernels {

enum class Trans : bool { N = false, T = true };

}  // namespace attn::kernels

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_GEMM_KERNELS(X)                                                                                           \
  /* C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C, all row-major.                                               \
     a: m×k (lda ≥ k) when trans_a == N, k×m (lda ≥ m) when T.                                                         \
     b: k×n (ldb ≥ n) when trans_b == N, n×k (ldb ≥ k) when T.                                                         \
     c: m×n (ldc ≥ n).                                                                                                 \
     beta == 0 overwrites C (whatever it held, NaN included). Any m, n, k ≥ 0;                                         \
     k == 0 or alpha == 0 scales C by beta without reading A or B. Bad sizes or                                        \
     leading dimensions throw attn::Error. Results are bitwise the same run to                                         \
     run and for any thread count: k is never split across threads, and the                                            \
     summation order depends on the shape (and ISA) only: a product with m ≤ 4,                                        \
     A stored m×k and B stored n×k sums k in interleaved partial sums, one per                                         \
     vector lane; all others accumulate k in order, one multiply-add at a time. */                                     \
  X(void, sgemm_fp32, (Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,           \
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,            \
                  std::int64_t ldc),                                                                                   \
    (trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))                                                  \
  /* batch independent GEMMs of one shape: operand i starts at a + i·stride_a,                                         \
     b + i·stride_b, c + i·stride_c (strides in floats). For attention (B·H small                                      \
     products at once): threads go over the batch when it is large enough,                                             \
     inside each GEMM otherwise. Each product's result is what sgemm_fp32 gives. */                                         \
  X(void, sgemm_fp32_batched, (Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,       \
                               float alpha,                                                                            \
                          const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,   \
                          std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,        \
                          std::int64_t batch),                                                                         \
    (trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch))

namespace attn::kernels {
ATTN_GEMM_KERNELS(ATTN_DECLARE_KERNEL)

// What sgemm, sgemm_batched and weight_product run, for the whole process (as
// PyTorch's set_float32_matmul_precision): fp32 → sgemm_fp32 (the default);
// bf16 → gemm_bf16 (operands rounded to bf16, FP32 sums); int8 (decoding only:
// the weights must not change meanwhile) → weight_product on gemm_int8, the
// other products in FP32. Training with --precision and decoding with
// --compute-type set it. Leaving int8 drops the quantized weights.
enum class GemmPrecision { fp32, bf16, int8 };
void set_gemm_precision(GemmPrecision precision);
GemmPrecision gemm_precision();

// Sets the precision for its lifetime, then restores the one before.
class GemmPrecisionScope {
 public:
  explicit GemmPrecisionScope(GemmPrecision precision) : saved_(gemm_precision()) { set_gemm_precision(precision); }
  ~GemmPrecisionScope() { set_gemm_precision(saved_); }
  GemmPrecisionScope(const GemmPrecisionScope&) = delete;
  GemmPrecisionScope& operator=(const GemmPrecisionScope&) = delete;

 private:
  GemmPrecision saved_;
};

// sgemm_fp32 or gemm_bf16 (same arguments and checks), by gemm_precision().
void sgemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
void sgemm_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                   std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                   std::int64_t batch);

// y[rows × out] = x[rows × in]·Wᵀ + beta·y for a weight W [out × in] (rows ldw
// apart): sgemm, except under int8, where W is quantized on first use (kept
// by address and shape until the precision changes) and gemm_int8 runs.
void weight_product(std::int64_t rows, std::int64_t out, std::int64_t in, const float* x, std::int64_t ldx,
                    const float* w, std::int64_t ldw, float beta, float* y, std::int64_t ldy);
}  // namespace attn::kernels
