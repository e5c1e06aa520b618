#include "attn/kernels/elementwise.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/elementwise.inc"
}
namespace isa_avx2 {
#include "isa/elementwise.inc"
}
namespace isa_avx512 {
#include "isa/elementwise.inc"
}

void add(const float* a, const float* b, float* y, std::int64_t n) { ATTN_DISPATCH(add, a, b, y, n) }
void scale(float* x, float alpha, std::int64_t n) { ATTN_DISPATCH(scale, x, alpha, n) }
void axpy(float alpha, const float* x, float* y, std::int64_t n) { ATTN_DISPATCH(axpy, alpha, x, y, n) }
void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols) {
  ATTN_DISPATCH(add_row_vector, y, v, rows, cols)
}
void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols) {
  ATTN_DISPATCH(sum_rows, dy, dv, rows, cols)
}
double sum(const float* x, std::int64_t n) { ATTN_DISPATCH(sum, x, n) }
double sum_squares(const float* x, std::int64_t n) { ATTN_DISPATCH(sum_squares, x, n) }
float max_value(const float* x, std::int64_t n) { ATTN_DISPATCH(max_value, x, n) }
bool all_finite(const float* x, std::int64_t n) { ATTN_DISPATCH(all_finite, x, n) }

}  // namespace attn::kernels
