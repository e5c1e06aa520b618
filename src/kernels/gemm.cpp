// The GEMM entry points: each checks its shape, puts the product in stride
// form (product.h) and runs it on the active ISA's kernels (kernel_table.h);
// a batch runs its items there, with threads over the items or inside each.
#include "attn/kernels/gemm.h"

#include <omp.h>

#include <algorithm>
#include <string>

#include "attn/core/error.h"
#include "attn/kernels/gemm_bf16.h"
#include "kernel_table.h"

namespace attn::kernels {

namespace {

std::int64_t ceil_div_of(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

[[noreturn]] void bad_shape(const char* what, std::int64_t got, std::int64_t need) {
  throw Error(std::string("sgemm: ") + what + " " + std::to_string(got) + " (need >= " + std::to_string(need) + ")");
}

// Leading dimensions are checked against the stored width, as BLAS does; a
// bad one would read or write out of bounds silently otherwise. Messages are
// built only on failure: this runs on every (often tiny) product.
Product checked_product(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                        std::int64_t ldc, std::int64_t batch = 1) {
  if (m < 0) bad_shape("m", m, 0);
  if (n < 0) bad_shape("n", n, 0);
  if (k < 0) bad_shape("k", k, 0);
  const std::int64_t a_width = trans_a == Trans::N ? k : m;
  const std::int64_t b_width = trans_b == Trans::N ? n : k;
  if (lda < a_width || lda < 1) bad_shape("lda", lda, a_width > 1 ? a_width : 1);
  if (ldb < b_width || ldb < 1) bad_shape("ldb", ldb, b_width > 1 ? b_width : 1);
  if (ldc < n || ldc < 1) bad_shape("ldc", ldc, n > 1 ? n : 1);
  if (batch < 0) bad_shape("batch", batch, 0);
  Product p{m, n, k, alpha, a, 0, 0, b, 0, 0, beta, c, ldc};
  if (trans_a == Trans::N) {
    p.a_row = lda;
    p.a_step = 1;
  } else {
    p.a_row = 1;
    p.a_step = lda;
  }
  if (trans_b == Trans::N) {
    p.b_col = 1;
    p.b_step = ldb;
  } else {
    p.b_col = ldb;
    p.b_step = 1;
  }
  return p;
}

// C = alpha · A·op(B) + beta · C with op(B) packed (Fp32PackedB or
// Bf16PackedB) by the ISA whose panels are panel_cols wide, on `product`.
template <typename Packed>
void run_packed(const char* name, std::int64_t m, float alpha, const float* a, std::int64_t lda, const Packed& b,
                float beta, float* c, std::int64_t ldc, std::int64_t panel_cols,
                void (*product)(const Product&, const Packed*, bool)) {
  // op(B) is read from b alone: the pointer in its place is never read.
  const Product p = checked_product(Trans::N, Trans::N, m, b.n, b.k, alpha, a, lda, nullptr,
                                    std::max<std::int64_t>(b.n, 1), beta, c, ldc);
  if (b.n > 0 && b.k > 0 && b.panel_cols != panel_cols)
    throw Error(std::string(name) + ": B was packed for another ISA's tiles");
  product(p, b.k > 0 ? &b : nullptr, true);
}

// The batch's items, item i's operands i strides (in floats) on from first's,
// each by run(item, allow_threads): threads over the batch when it keeps
// them evenly busy (or the products are too small to split), inside each
// product otherwise.
template <typename RunProduct>
void run_batch(const Product& first, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
               std::int64_t batch, RunProduct run) {
  if (batch == 0 || first.m == 0 || first.n == 0) return;
  auto item = [&](std::int64_t i) {
    Product p = first;
    p.a += i * stride_a;
    p.b += i * stride_b;
    p.c += i * stride_c;
    return p;
  };
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const bool over_batch =
      threads > 1 && batch >= threads &&
      (batch % threads == 0 || batch >= 4 * threads || first.m * first.n * first.k < kParallelMinMacs);
  if (over_batch) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < batch; ++i) run(item(i), false);
  } else {
    for (std::int64_t i = 0; i < batch; ++i) run(item(i), true);
  }
}

}  // namespace

void sgemm_fp32(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc) {
  active_kernels().fp32_product(checked_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
                                nullptr, true);
}

void sgemm_fp32_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                        std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                        std::int64_t batch) {
  const Product first = checked_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch);
  const auto fp32_product = active_kernels().fp32_product;
  run_batch(first, stride_a, stride_b, stride_c, batch,
            [fp32_product](const Product& p, bool allow_threads) { fp32_product(p, nullptr, allow_threads); });
}

std::int64_t fp32_panel_cols() { return active_kernels().fp32_panel_cols; }

Fp32PackedB pack_fp32_b(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                        std::int64_t k) {
  Fp32PackedB packed;
  active_kernels().pack_fp32_b_into(b, col_stride, step_stride, n, k, packed);
  return packed;
}

void gather_fp32_packed_columns(const Fp32PackedB& b, const std::int32_t* ids, std::int64_t count, float scale,
                                float* out) {
  const std::int64_t panels = ceil_div_of(b.n, b.panel_cols);
  for (std::int64_t t = 0; t < count; ++t) {
    const std::int64_t j = ids[t], panel = j / b.panel_cols, c = j % b.panel_cols;
    float* row = out + t * b.k;
    for (std::int64_t p0 = 0, block = 0; p0 < b.k; p0 += b.kc_len, ++block) {
      const std::int64_t kc = std::min(b.kc_len, b.k - p0);
      // Panel `panel` of k block `block`: kc steps of panel_cols floats (kc_len long).
      const float* steps = b.values.data() + (block * panels + panel) * b.kc_len * b.panel_cols + c;
      for (std::int64_t q = 0; q < kc; ++q) row[p0 + q] = scale * steps[q * b.panel_cols];
    }
  }
}

void sgemm_fp32_packed(std::int64_t m, float alpha, const float* a, std::int64_t lda, const Fp32PackedB& b, float beta,
                       float* c, std::int64_t ldc) {
  const KernelTable& kernels = active_kernels();
  run_packed("sgemm_fp32_packed", m, alpha, a, lda, b, beta, c, ldc, kernels.fp32_panel_cols, kernels.fp32_product);
}

void gemm_bf16(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc) {
  active_kernels().bf16_product(checked_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
                                nullptr, true);
}

void gemm_bf16_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                       const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                       std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch) {
  const Product first = checked_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch);
  const auto bf16_product = active_kernels().bf16_product;
  run_batch(first, stride_a, stride_b, stride_c, batch,
            [bf16_product](const Product& p, bool allow_threads) { bf16_product(p, nullptr, allow_threads); });
}

std::int64_t bf16_panel_cols() { return active_kernels().bf16_panel_cols; }

void pack_bf16_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Bf16PackedB& packed) {
  active_kernels().pack_bf16_b_into(b, col_stride, step_stride, n, k, packed);
}

Bf16PackedB pack_bf16_b(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                        std::int64_t k) {
  Bf16PackedB packed;
  pack_bf16_b_into(b, col_stride, step_stride, n, k, packed);
  return packed;
}

void gemm_bf16_packed(std::int64_t m, float alpha, const float* a, std::int64_t lda, const Bf16PackedB& b, float beta,
                      float* c, std::int64_t ldc) {
  const KernelTable& kernels = active_kernels();
  run_packed("gemm_bf16_packed", m, alpha, a, lda, b, beta, c, ldc, kernels.bf16_panel_cols, kernels.bf16_product);
}

}  // namespace attn::kernels
