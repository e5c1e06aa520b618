// The run-time dispatch of the dropout kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/dropout.h"

#include "dispatch.h"
#include "isa/dropout.h"

namespace attn::kernels {

namespace {
const DropoutKernels& active() {
  return active_build(isa_scalar::dropout_kernels, isa_avx2::dropout_kernels, isa_avx512::dropout_kernels);
}
}  // namespace

void dropout_forward(const float* x, float* y, std::uint8_t* keep, std::int64_t n, float p, std::uint64_t seed,
                     std::uint64_t counter) {
  return active().dropout_forward(x, y, keep, n, p, seed, counter);
}

void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  return active().dropout_backward(dy, keep, dx, n, p);
}

void dropout_backward_write(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  return active().dropout_backward_write(dy, keep, dx, n, p);
}

}  // namespace attn::kernels
