// The run-time dispatch of the softmax kernels (dispatch.h).
#include "attn/kernels/softmax.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_SOFTMAX_KERNELS)
}  // namespace attn::kernels
