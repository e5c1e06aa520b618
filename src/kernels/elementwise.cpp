// The run-time dispatch of the elementwise kernels (dispatch.h).
#include "attn/kernels/elementwise.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_ELEMENTWISE_KERNELS)
}  // namespace attn::kernels
