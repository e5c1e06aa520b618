// The run-time dispatch of the activation kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/activation.h"

#include "dispatch.h"
#include "isa/activation.h"

namespace attn::kernels {

namespace {
const ActivationKernels& active() {
  return active_build(isa_scalar::activation_kernels, isa_avx2::activation_kernels, isa_avx512::activation_kernels);
}
}  // namespace

void activation_forward(Activation act, const float* x, float* y, std::int64_t n) {
  return active().activation_forward(act, x, y, n);
}

void activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n) {
  return active().activation_backward(act, x, dy, dx, n);
}

void bias_activation_forward(Activation act, float* y, const float* bias, float* pre, std::int64_t rows,
                             std::int64_t cols) {
  return active().bias_activation_forward(act, y, bias, pre, rows, cols);
}

}  // namespace attn::kernels
