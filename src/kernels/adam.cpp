#include "attn/kernels/adam.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/adam.inc"
}
namespace isa_avx2 {
#include "isa/adam.inc"
}
namespace isa_avx512 {
#include "isa/adam.inc"
}

void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale) {
  ATTN_DISPATCH(adam_update, param, grad, m, v, n, hyper, grad_scale)
}

}  // namespace attn::kernels
