// The run-time dispatch of the layernorm kernels (dispatch.h).
#include "attn/kernels/layernorm.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_LAYERNORM_KERNELS)
}  // namespace attn::kernels
