// The run-time dispatch of the GEMM kernels (dispatch.h) and their shape check.
#include "attn/kernels/gemm.h"

#include <string>

#include "attn/core/error.h"
#include "dispatch.h"
#include "gemm_shape.h"
#include "isa/gemm.h"

namespace attn::kernels {

namespace {
[[noreturn]] void bad_shape(const char* what, std::int64_t got, std::int64_t need) {
  throw Error(std::string("sgemm: ") + what + " " + std::to_string(got) + " (need >= " + std::to_string(need) + ")");
}
}  // namespace

// Messages are built only on failure: this runs on every (often tiny) product.
void check_gemm_shape(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                      std::int64_t ldb, std::int64_t ldc, std::int64_t batch) {
  if (m < 0) bad_shape("m", m, 0);
  if (n < 0) bad_shape("n", n, 0);
  if (k < 0) bad_shape("k", k, 0);
  const std::int64_t a_width = trans_a == Trans::N ? k : m;
  const std::int64_t b_width = trans_b == Trans::N ? n : k;
  if (lda < a_width || lda < 1) bad_shape("lda", lda, a_width > 1 ? a_width : 1);
  if (ldb < b_width || ldb < 1) bad_shape("ldb", ldb, b_width > 1 ? b_width : 1);
  if (ldc < n || ldc < 1) bad_shape("ldc", ldc, n > 1 ? n : 1);
  if (batch < 0) bad_shape("batch", batch, 0);
}

namespace {
const GemmKernels& active() {
  return active_build(isa_scalar::gemm_kernels, isa_avx2::gemm_kernels, isa_avx512::gemm_kernels);
}
}  // namespace

void sgemm_fp32(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc) {
  return active().sgemm_fp32(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_fp32_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                        std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                        std::int64_t batch) {
  return active().sgemm_fp32_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                                     stride_c, batch);
}

}  // namespace attn::kernels
