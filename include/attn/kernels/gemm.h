// SGEMM: packed, cache-blocked, register-tiled, OpenMP over tiles; one
// source per ISA (src/kernels/isa/gemm.cpp), chosen at run time
// (src/kernels/kernel_table.h). The model's layers multiply in a compute type
// (products.h), which picks this or the bf16 and int8 products.
#pragma once
#include <cstdint>

namespace attn::kernels {

enum class Trans : bool { N = false, T = true };

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C, all row-major.
//   a: m×k (lda ≥ k) when trans_a == N, k×m (lda ≥ m) when T.
//   b: k×n (ldb ≥ n) when trans_b == N, n×k (ldb ≥ k) when T.
//   c: m×n (ldc ≥ n), aliasing neither a nor b.
// beta == 0 overwrites C (whatever it held, NaN included). Any m, n, k ≥ 0;
// k == 0 or alpha == 0 scales C by beta without reading A or B. Bad sizes or
// leading dimensions throw attn::Error. Threads: OpenMP over tiles of C (one
// thread inside a parallel region). Results are bitwise the same run to run
// and for any thread count: k is never split across threads, and the
// summation order depends on the shape (and ISA) only: a product with m ≤ 4,
// A stored m×k and B stored n×k sums k in interleaved partial sums, one per
// vector lane; all others accumulate k in order, one multiply-add at a time.
void sgemm_fp32(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc);

// batch independent GEMMs of one shape: operand i starts at a + i·stride_a,
// b + i·stride_b, c + i·stride_c (strides in floats; the C's must not
// overlap). For attention (B·H small products at once): threads go over the
// batch when it is large enough, inside each GEMM otherwise. Each product's
// result is what sgemm_fp32 gives.
void sgemm_fp32_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                        std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                        std::int64_t batch);

}  // namespace attn::kernels
