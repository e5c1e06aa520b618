#include "attn/kernels/rows.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/rows.inc"
}
namespace isa_avx2 {
#include "isa/rows.inc"
}
namespace isa_avx512 {
#include "isa/rows.inc"
}

void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out) {
  ATTN_DISPATCH(strided_dots, a, rows, stride, count, n, scale, out)
}
void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y) {
  ATTN_DISPATCH(accumulate_rows, coef, rows, stride, count, n, y)
}

}  // namespace attn::kernels
