// The run-time dispatch of the elementwise kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/elementwise.h"

#include "dispatch.h"
#include "isa/elementwise.h"

namespace attn::kernels {

namespace {
const ElementwiseKernels& active() {
  return active_build(isa_scalar::elementwise_kernels, isa_avx2::elementwise_kernels, isa_avx512::elementwise_kernels);
}
}  // namespace

void add(const float* a, const float* b, float* y, std::int64_t n) { return active().add(a, b, y, n); }

void scale(float* x, float alpha, std::int64_t n) { return active().scale(x, alpha, n); }

void axpy(float alpha, const float* x, float* y, std::int64_t n) { return active().axpy(alpha, x, y, n); }

void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols) {
  return active().add_row_vector(y, v, rows, cols);
}

void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols) {
  return active().sum_rows(dy, dv, rows, cols);
}

double sum(const float* x, std::int64_t n) { return active().sum(x, n); }

double sum_squares(const float* x, std::int64_t n) { return active().sum_squares(x, n); }

float max_value(const float* x, std::int64_t n) { return active().max_value(x, n); }

bool all_finite(const float* x, std::int64_t n) { return active().all_finite(x, n); }

}  // namespace attn::kernels
