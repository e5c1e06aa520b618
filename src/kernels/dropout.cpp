// The run-time dispatch of the dropout kernels (dispatch.h).
#include "attn/kernels/dropout.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_DROPOUT_KERNELS)
}  // namespace attn::kernels
