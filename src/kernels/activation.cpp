#include "attn/kernels/activation.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/activation.inc"
}
namespace isa_avx2 {
#include "isa/activation.inc"
}
namespace isa_avx512 {
#include "isa/activation.inc"
}

void activation_forward(Activation act, const float* x, float* y, std::int64_t n) {
  ATTN_DISPATCH(activation_forward, act, x, y, n)
}
void activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n) {
  ATTN_DISPATCH(activation_backward, act, x, dy, dx, n)
}
void bias_activation_forward(Activation act, float* y, const float* bias, float* pre, std::int64_t rows,
                             std::int64_t cols) {
  ATTN_DISPATCH(bias_activation_forward, act, y, bias, pre, rows, cols)
}

}  // namespace attn::kernels
