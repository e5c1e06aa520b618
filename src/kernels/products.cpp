#include "attn/kernels/products.h"

#include "attn/core/error.h"
#include <string>

#include "attn/kernels/gemm_bf16.h"

namespace attn::kernels {

std::string_view compute_type_name(ComputeType type) {
  switch (type) {
    case ComputeType::bf16: return "bf16";
    case ComputeType::int8: return "int8";
    case ComputeType::fp32: break;
  }
  return "fp32";
}

std::optional<ComputeType> parse_compute_type(std::string_view name) {
  for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8})
    if (name == compute_type_name(type)) return type;
  return std::nullopt;
}

void gemm(ComputeType type, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (type == ComputeType::bf16)
    gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    sgemm_fp32(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_batched(ComputeType type, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  float alpha, const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                  std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                  std::int64_t stride_c, std::int64_t batch) {
  if (type == ComputeType::bf16)
    gemm_bf16_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                      batch);
  else
    sgemm_fp32_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                       batch);
}

// A packed FP32 form is made for decoding only; an empty one (a form not
// made) or one packed for another ISA is not read.
bool fp32_packed_usable(const WeightForm& w) {
  return w.fp32 && w.fp32->n == w.rows && w.fp32->k == w.cols && w.fp32->panel_cols == fp32_panel_cols();
}

namespace {
bool usable(const Bf16PackedB* packed) { return packed && packed->panel_cols == bf16_panel_cols(); }

// The FP32 values a product packs as it goes; a form held without them (a
// model loaded for decoding) has no other way to multiply.
const float* values_of(const WeightForm& w) {
  if (!w.values && w.rows > 0 && w.cols > 0)
    throw Error("weight_product: a " + std::string(compute_type_name(w.type)) +
                " weight held without its FP32 values, in no form the active ISA multiplies (a model loaded for "
                "decoding is decoded on the ISA it was loaded on)");
  return w.values;
}
}  // namespace

void weight_product(const WeightForm& w, std::int64_t m, const float* x, std::int64_t ldx, float beta, float* y,
                    std::int64_t ldy) {
  if (w.type == ComputeType::int8) {
    if (!w.int8) throw Error("weight_product: an int8 form without its quantized weight");
    if (m > 0 && w.rows > 0 && w.cols > 0)
      gemm_int8(m, x, ldx, *w.int8, beta, y, ldy);
    else if (m > 0 && w.rows > 0)
      sgemm_fp32(Trans::N, Trans::T, m, w.rows, 0, 1.0f, x, ldx, w.values, w.ld, beta, y, ldy);
    return;
  }
  if (w.type == ComputeType::bf16 && usable(w.bf16))
    gemm_bf16_packed(m, 1.0f, x, ldx, *w.bf16, beta, y, ldy);
  else if (w.type == ComputeType::fp32 && fp32_packed_usable(w))
    sgemm_fp32_packed(m, 1.0f, x, ldx, *w.fp32, beta, y, ldy);
  else
    gemm(w.type, Trans::N, Trans::T, m, w.rows, w.cols, 1.0f, x, ldx, values_of(w), w.ld, beta, y, ldy);
}

void weight_product_backward(const WeightForm& w, std::int64_t m, const float* dy, std::int64_t lddy, float beta,
                             float* dx, std::int64_t lddx) {
  if (w.type == ComputeType::bf16 && usable(w.bf16_backward))
    gemm_bf16_packed(m, 1.0f, dy, lddy, *w.bf16_backward, beta, dx, lddx);
  else
    gemm(w.type == ComputeType::bf16 ? ComputeType::bf16 : ComputeType::fp32, Trans::N, Trans::N, m, w.cols, w.rows,
         1.0f, dy, lddy, values_of(w), w.ld, beta, dx, lddx);
}

}  // namespace attn::kernels
