// The run-time dispatch of the embedding kernels (dispatch.h).
#include "attn/kernels/embedding.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_KERNELS(ATTN_EMBEDDING_KERNELS)
}  // namespace attn::kernels
