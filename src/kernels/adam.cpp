// The run-time dispatch of the adam kernels (dispatch.h).
#include "attn/kernels/adam.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_ADAM_KERNELS)
}  // namespace attn::kernels
