// The run-time dispatch of the activation kernels (dispatch.h).
#include "attn/kernels/activation.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_ACTIVATION_KERNELS)
}  // namespace attn::kernels
