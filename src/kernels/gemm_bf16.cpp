// The run-time dispatch of the gemm_bf16 kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/gemm_bf16.h"

#include "dispatch.h"
#include "isa/lowp/gemm_bf16.h"

namespace attn::kernels {

namespace {
const GemmBf16Kernels& active() {
  return active_build(isa_scalar::gemm_bf16_kernels, isa_avx2::gemm_bf16_kernels, isa_avx512::gemm_bf16_kernels,
                      isa_avx512vnni::gemm_bf16_kernels, isa_avx512bf16::gemm_bf16_kernels);
}
}  // namespace

void gemm_bf16(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc) {
  return active().gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_bf16_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                       const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                       std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch) {
  return active().gemm_bf16_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                                    stride_c, batch);
}

std::int64_t bf16_panel_cols() { return active().bf16_panel_cols(); }

Bf16PackedB pack_bf16_b(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                        std::int64_t k) {
  Bf16PackedB packed;
  active().pack_bf16_b_into(b, col_stride, step_stride, n, k, packed);
  return packed;
}

void pack_bf16_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Bf16PackedB& packed) {
  active().pack_bf16_b_into(b, col_stride, step_stride, n, k, packed);
}

void gemm_bf16_packed(std::int64_t m, float alpha, const float* a, std::int64_t lda, const Bf16PackedB& b, float beta,
                      float* c, std::int64_t ldc) {
  return active().gemm_bf16_packed(m, alpha, a, lda, b, beta, c, ldc);
}

}  // namespace attn::kernels
