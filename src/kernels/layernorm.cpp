// The run-time dispatch of the layernorm kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/layernorm.h"

#include "dispatch.h"
#include "isa/layernorm.h"

namespace attn::kernels {

namespace {
const LayernormKernels& active() {
  return active_build(isa_scalar::layernorm_kernels, isa_avx2::layernorm_kernels, isa_avx512::layernorm_kernels);
}
}  // namespace

void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                       std::int64_t rows, std::int64_t d, float eps) {
  return active().layernorm_forward(x, gamma, beta, y, mean, rstd, rows, d, eps);
}

void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
  return active().layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, d);
}

}  // namespace attn::kernels
