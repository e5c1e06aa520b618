// The run-time dispatch of the rows kernels (dispatch.h).
#include "attn/kernels/rows.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_ROWS_KERNELS)
}  // namespace attn::kernels
