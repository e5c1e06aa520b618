#include "attn/kernels/layernorm.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/layernorm.inc"
}
namespace isa_avx2 {
#include "isa/layernorm.inc"
}
namespace isa_avx512 {
#include "isa/layernorm.inc"
}

void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                       std::int64_t rows, std::int64_t d, float eps) {
  ATTN_DISPATCH(layernorm_forward, x, gamma, beta, y, mean, rstd, rows, d, eps)
}
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
  ATTN_DISPATCH(layernorm_backward, dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, d)
}

}  // namespace attn::kernels
