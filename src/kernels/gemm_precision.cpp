// The process's GEMM precision and the products that follow it: sgemm,
// sgemm_batched and weight_product (with its quantized weights under int8).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <tuple>

#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_bf16.h"
#include "attn/kernels/gemm_int8.h"

namespace attn::kernels {

namespace {

std::atomic<GemmPrecision> g_precision{GemmPrecision::fp32};

// Quantized weights by (address, rows, columns, leading dimension).
class QuantizedWeights {
 public:
  // Looked up under a shared lock (attn serve's decoders run side by side);
  // quantized once, under the exclusive one.
  const QuantizedWeight& get(const float* w, std::int64_t n, std::int64_t k, std::int64_t ldw) {
    const Key key{w, n, k, ldw};
    {
      const std::shared_lock lock(mutex_);
      const auto found = weights_.find(key);
      if (found != weights_.end()) return *found->second;
    }
    const std::unique_lock lock(mutex_);
    std::unique_ptr<QuantizedWeight>& held = weights_[key];
    if (!held) held = std::make_unique<QuantizedWeight>(quantize_weight(w, ldw, n, k));
    return *held;
  }
  void clear() {
    const std::unique_lock lock(mutex_);
    weights_.clear();
  }

 private:
  using Key = std::tuple<const float*, std::int64_t, std::int64_t, std::int64_t>;
  std::shared_mutex mutex_;
  std::map<Key, std::unique_ptr<QuantizedWeight>> weights_;
};

QuantizedWeights& quantized_weights() {
  static QuantizedWeights weights;
  return weights;
}

}  // namespace

void set_gemm_precision(GemmPrecision precision) {
  if (g_precision.exchange(precision) == GemmPrecision::int8 && precision != GemmPrecision::int8)
    quantized_weights().clear();
}
GemmPrecision gemm_precision() { return g_precision.load(std::memory_order_relaxed); }

void sgemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (gemm_precision() == GemmPrecision::bf16)
    gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    sgemm_fp32(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                   std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                   std::int64_t batch) {
  if (gemm_precision() == GemmPrecision::bf16)
    gemm_bf16_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                      batch);
  else
    sgemm_fp32_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                       batch);
}

void weight_product(std::int64_t rows, std::int64_t out, std::int64_t in, const float* x, std::int64_t ldx,
                    const float* w, std::int64_t ldw, float beta, float* y, std::int64_t ldy) {
  if (gemm_precision() == GemmPrecision::int8 && rows > 0 && out > 0 && in > 0)
    gemm_int8(rows, x, ldx, quantized_weights().get(w, out, in, ldw), beta, y, ldy);
  else
    sgemm(Trans::N, Trans::T, rows, out, in, 1.0f, x, ldx, w, ldw, beta, y, ldy);
}

}  // namespace attn::kernels
