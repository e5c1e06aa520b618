// The run-time dispatch of the rows kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/rows.h"

#include "dispatch.h"
#include "isa/rows.h"

namespace attn::kernels {

namespace {
const RowsKernels& active() {
  return active_build(isa_scalar::rows_kernels, isa_avx2::rows_kernels, isa_avx512::rows_kernels);
}
}  // namespace

void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out) {
  return active().strided_dots(a, rows, stride, count, n, scale, out);
}

void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y) {
  return active().accumulate_rows(coef, rows, stride, count, n, y);
}

}  // namespace attn::kernels
