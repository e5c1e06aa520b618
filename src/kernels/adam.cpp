// The run-time dispatch of the adam kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/adam.h"

#include "dispatch.h"
#include "isa/adam.h"

namespace attn::kernels {

namespace {
const AdamKernels& active() {
  return active_build(isa_scalar::adam_kernels, isa_avx2::adam_kernels, isa_avx512::adam_kernels);
}
}  // namespace

void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale) {
  return active().adam_update(param, grad, m, v, n, hyper, grad_scale);
}

}  // namespace attn::kernels
