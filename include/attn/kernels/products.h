// Products in a compute type. A model is loaded into a compute type, and its
// weight matrices are then held in the form that type multiplies (a
// WeightForm, made once); the products between activations (attention's
// scores and mixtures) follow the same type. There is no process-wide
// setting: two models in one process may run in two types side by side.
//   fp32  sgemm_fp32 everywhere.
//   bf16  gemm_bf16 everywhere: operands rounded to bf16, FP32 sums.
//   int8  weight products on gemm_int8 (the weight quantized once, per row;
//         the input per row at run time); activation products in FP32.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_bf16.h"
#include "attn/kernels/gemm_int8.h"

namespace attn::kernels {

enum class ComputeType { fp32, bf16, int8 };

// The types a model multiplies in: its weight matrices' form and the
// products between activations (attention's Q·Kᵀ and P·V, a convolution's
// taps). A pair, as CTranslate2's (weight type, float type), and not one type
// with the second inferred: the two differ for a reason that belongs at the
// call site. Decoding multiplies one query row per head by the caches each
// step, where rounding and packing the caches costs more than bf16 saves
// (perf, beam 5: 19% of bf16 decoding went to packing them), so bf16 and int8
// decoding keep the activation products in FP32; bf16 training rounds them
// too (its T×T products are the large ones). decoding() and training() name
// the two pairs attn runs; no member has a default, so nothing runs FP32
// because an argument was forgotten.
struct ComputeTypes {
  ComputeType weights;
  ComputeType activations;
  static constexpr ComputeTypes decoding(ComputeType type) { return {type, ComputeType::fp32}; }
  static constexpr ComputeTypes training(ComputeType type) { return {type, type}; }
  bool operator==(const ComputeTypes&) const = default;
};

// "fp32", "bf16", "int8"; parse_compute_type: nullopt for any other text.
std::string_view compute_type_name(ComputeType type);
std::optional<ComputeType> parse_compute_type(std::string_view name);

// C = alpha · op(A)·op(B) + beta · C between activations, with sgemm's
// arguments and checks: gemm_bf16 under bf16, sgemm_fp32 otherwise.
void gemm(ComputeType type, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
void gemm_batched(ComputeType type, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  float alpha, const float* a, std::int64_t lda, std::int64_t stride_a, const float* b,
                  std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                  std::int64_t stride_c, std::int64_t batch);

// A weight matrix W [rows × cols] (rows ld floats apart) in the form its
// compute type multiplies, made once from the FP32 values (and made again
// after they change, as training does once per update):
//   fp32  the values themselves, read at each product (training); a model
//         loaded for decoding holds Wᵀ packed for the tiles (pack_fp32_b)
//         instead, the values dropped: a beam's few rows per step would
//         otherwise pack W again at every product;
//   bf16  W rounded to bf16 and packed for the tiles (pack_bf16_b): `bf16`
//         for x·Wᵀ, `bf16_backward` for dy·W (made only for training);
//   int8  W quantized per row (quantize_weight); the values no longer read.
// A model loaded for decoding keeps no FP32 values of a matrix it holds in
// another form (values null), as CTranslate2 drops a weight once converted.
// Where they are kept (training, or a matrix also read in FP32), a product
// whose packed form is absent (or packed for another ISA than the active one)
// packs them as it goes, with the same bits.
struct WeightForm {
  ComputeType type;
  const float* values = nullptr;  // [rows, ld], or null when only the form is held
  std::int64_t rows = 0, cols = 0, ld = 0;
  const Fp32PackedB* fp32 = nullptr;           // under fp32, decoding: op(B) = Wᵀ, n = rows, k = cols
  const QuantizedWeight* int8 = nullptr;       // under int8
  const Bf16PackedB* bf16 = nullptr;           // under bf16: op(B) = Wᵀ, n = rows, k = cols
  const Bf16PackedB* bf16_backward = nullptr;  // under bf16, training: op(B) = W, n = cols, k = rows
};

// Whether w's packed FP32 form is there to be read: made (for decoding), of
// w's shape, and packed for the active ISA's tiles.
bool fp32_packed_usable(const WeightForm& w);

// y[m × rows] = x[m × cols]·Wᵀ + beta·y, x's rows ldx apart, y's ldy.
void weight_product(const WeightForm& w, std::int64_t m, const float* x, std::int64_t ldx, float beta, float* y,
                    std::int64_t ldy);
// dx[m × cols] = dy[m × rows]·W + beta·dx (the input's gradient), dy's rows
// lddy apart, dx's lddx; in FP32 under int8 (a form made for decoding only).
void weight_product_backward(const WeightForm& w, std::int64_t m, const float* dy, std::int64_t lddy, float beta,
                             float* dx, std::int64_t lddx);

}  // namespace attn::kernels
