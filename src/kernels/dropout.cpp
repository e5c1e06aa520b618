#include "attn/kernels/dropout.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/dropout.inc"
}
namespace isa_avx2 {
#include "isa/dropout.inc"
}
namespace isa_avx512 {
#include "isa/dropout.inc"
}

void dropout_forward(const float* x, float* y, std::uint8_t* keep, std::int64_t n, float p, std::uint64_t seed,
                     std::uint64_t counter) {
  ATTN_DISPATCH(dropout_forward, x, y, keep, n, p, seed, counter)
}
void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  ATTN_DISPATCH(dropout_backward, dy, keep, dx, n, p)
}
void dropout_backward_write(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  ATTN_DISPATCH(dropout_backward_write, dy, keep, dx, n, p)
}

}  // namespace attn::kernels
