// bf16 GEMM: the products of sgemm_fp32 with both operands rounded to bfloat16 and
// FP32 accumulation, on AVX512_BF16's vdpbf16ps (ISA avx512bf16) or an
// emulation of it with FP32 FMA on the other ISAs, bitwise the same. Each
// kernel is built per ISA and picked at run time (src/kernels/kernel_table.h);
// threads as sgemm_fp32's (OpenMP over tiles of C, one thread inside a
// parallel region), never changing a result.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attn/kernels/gemm.h"

namespace attn::kernels {

// Round to nearest even, as the packing does: denormals become a zero of
// their sign (the instruction treats them so), NaN stays a (quiet) NaN, and
// values past bf16's largest round to ±inf.
inline std::uint16_t bf16_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7F800000u) == 0) return static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }
inline float round_to_bf16(float x) { return bf16_to_float(bf16_bits(x)); }

// k is summed in blocks of at most this many steps (an even count fixed by k
// alone: ceil(k / blocks) rounded up to even, blocks = ceil(k / 512)).
inline constexpr std::int64_t kBf16KBlock = 512;

// op(B) of a product (n columns over k steps) rounded to bf16 and packed once
// in the layout the active ISA's register tiles read, so that a weight is
// converted when its compute form is made and not at every product:
//   k block b (steps b·kc_len … , the blocks gemm_bf16 uses for this k),
//   panel p (columns p·panel_cols …), pair q, column c:
//   pairs[((b·panels + p)·kp_len + q)·panel_cols + c]
//     = bf16(step b·kc_len + 2q) | bf16(step b·kc_len + 2q + 1) << 16,
// with kp_len = kc_len / 2, panels = ⌈n / panel_cols⌉, and zeros past n and k.
// panel_cols belongs to the ISA that packed it (bf16_panel_cols).
struct Bf16PackedB {
  std::int64_t n = 0, k = 0, kc_len = 0, panel_cols = 0;
  std::vector<std::uint32_t> pairs;
};

// C = alpha · op(A)·op(B) + beta · C with sgemm_fp32's arguments and checks, where
// every element of A and B is first rounded to bf16 (bf16_bits). Each C
// element's k sum is what vdpbf16ps computes: per k block, from 0, the pairs
// (p, p + 1) in order, each adding the product at p + 1 and then the one at p,
// every addition rounded to FP32 (products of bf16 values are exact) and
// flushed to a signed zero below FLT_MIN; then C = alpha·sum + beta·C (beta
// 1 after the first block). A product whose exact value is below FLT_MIN in
// magnitude may differ between the instruction and its emulation (it
// flushes such products, the emulation adds them before flushing the sum).
// Otherwise bitwise the same on every ISA and for any thread count.
void gemm_bf16(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc);

// batch products of one shape, as sgemm_fp32_batched; each is what gemm_bf16 gives.
void gemm_bf16_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                       const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                       std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch);

// The width of the B panels the active ISA's tiles read.
std::int64_t bf16_panel_cols();

// op(B) (n columns over k steps) packed for the active ISA: column j, step p
// is b[j·col_stride + p·step_stride]. A negative n or k throws attn::Error.
Bf16PackedB pack_bf16_b(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                        std::int64_t k);
// The same into `packed`, reusing its storage: training packs every weight
// again after each update, into the forms of the update before.
void pack_bf16_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Bf16PackedB& packed);

// C[m×n] = alpha · A[m×k]·op(B) + beta · C with op(B) packed (n and k are b's;
// A's rows lda apart, C's ldc): bitwise what gemm_bf16 gives with op(B)
// unpacked. b must have been packed for the active ISA (panel_cols ==
// bf16_panel_cols()); attn::Error otherwise, as for bad shapes.
void gemm_bf16_packed(std::int64_t m, float alpha, const float* a, std::int64_t lda, const Bf16PackedB& b, float beta,
                      float* c, std::int64_t ldc);

}  // namespace attn::kernels
