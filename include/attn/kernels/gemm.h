// SGEMM: packed, cache-blocked, register-tiled, OpenMP over tiles; one
// source per ISA (src/kernels/isa/gemm.cpp), chosen at run time.
#pragma once
#include <cstdint>

namespace attn::kernels {

enum class Trans : bool { N = false, T = true };

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C, all row-major.
//   A is stored m×k (lda ≥ k) when trans_a == N, k×m (lda ≥ m) when T.
//   B is stored k×n (ldb ≥ n) when trans_b == N, n×k (ldb ≥ k) when T.
// beta == 0 overwrites C (whatever it held, NaN included). Any m, n, k ≥ 0;
// k == 0 scales C by beta. Deterministic for a given thread count (the
// k-dimension is never split across threads).
void sgemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// batch independent GEMMs of one shape: operand i starts at a + i·stride_a,
// b + i·stride_b, c + i·stride_c. For attention (B·H small products at once):
// threads go over the batch when it is large enough, inside each GEMM otherwise.
void sgemm_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                   std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                   std::int64_t stride_c, std::int64_t batch);

}  // namespace attn::kernels
