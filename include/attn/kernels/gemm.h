// SGEMM: packed, cache-blocked, register-tiled, OpenMP over tiles; one
// source per ISA (src/kernels/isa/gemm.cpp), chosen at run time
// (src/kernels/kernel_table.h). The model's layers multiply in a compute type
// (products.h), which picks this or the bf16 and int8 products.
#pragma once
#include <cstdint>
#include <vector>

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

// op(B) of a product (n columns over k steps) packed once in the panels the
// active ISA's tiles read, as the product packs it block by block, so that a
// weight read at every decoding step is not packed again at every product
// (with a beam's few rows of A, packing B cost more than multiplying by it):
//   k block b (steps b·kc_len …, the blocks sgemm_fp32 uses for this k),
//   panel p (columns p·panel_cols …), step q, column c:
//   values[((b·panels + p)·kc_len + q)·panel_cols + c]
//     = op(B)[b·kc_len + q][p·panel_cols + c],
// with panels = ⌈n / panel_cols⌉ and zeros past n and k. panel_cols belongs
// to the ISA that packed it (fp32_panel_cols).
struct Fp32PackedB {
  std::int64_t n = 0, k = 0, kc_len = 0, panel_cols = 0;
  std::vector<float> values;
};

// The width of the B panels the active ISA's FP32 tiles read.
std::int64_t fp32_panel_cols();

// op(B) packed for the active ISA: column j, step p is
// b[j·col_stride + p·step_stride]. A negative n or k throws attn::Error.
Fp32PackedB pack_fp32_b(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                        std::int64_t k);

// out[t, :] = scale · column ids[t] of the packed op(B) (k floats each; when
// Wᵀ was packed, row ids[t] of W): a tied embedding gathered from the output
// projection's packed form, the bits of scale · W[ids[t], :]. ids in [0, n),
// not checked here. out: [count, k].
void gather_fp32_packed_columns(const Fp32PackedB& b, const std::int32_t* ids, std::int64_t count, float scale,
                                float* out);

// C[m×n] = alpha · A[m×k]·op(B) + beta · C with op(B) packed (n and k are b's;
// A's rows lda apart, C's ldc): bitwise what sgemm_fp32(N, N, …) gives with
// op(B) stored k×n, for any m (with B stored n×k, sgemm_fp32's few-row dot
// products round differently; from 5 rows on it is the same too). b must have
// been packed for the active ISA; attn::Error otherwise, as for bad shapes.
void sgemm_fp32_packed(std::int64_t m, float alpha, const float* a, std::int64_t lda, const Fp32PackedB& b, float beta,
                       float* c, std::int64_t ldc);

}  // namespace attn::kernels
