// The run-time dispatch of the softmax kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/softmax.h"

#include "dispatch.h"
#include "isa/softmax.h"

namespace attn::kernels {

namespace {
const SoftmaxKernels& active() {
  return active_build(isa_scalar::softmax_kernels, isa_avx2::softmax_kernels, isa_avx512::softmax_kernels);
}
}  // namespace

void softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid,
                     float scale) {
  return active().softmax_forward(x, y, rows, cols, valid, scale);
}

void softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,
                      const std::int32_t* valid, float scale) {
  return active().softmax_backward(y, dy, dx, rows, cols, valid, scale);
}

void log_softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  return active().log_softmax_forward(x, y, rows, cols);
}

void log_softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols) {
  return active().log_softmax_backward(y, dy, dx, rows, cols);
}

}  // namespace attn::kernels
