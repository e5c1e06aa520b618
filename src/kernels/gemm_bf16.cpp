// The run-time dispatch of the bf16 GEMM kernels (dispatch.h).
#include "attn/kernels/gemm_bf16.h"

#include "dispatch.h"

namespace attn::kernels {
ATTN_DISPATCH_LOWP_KERNELS(ATTN_GEMM_BF16_KERNELS)
}  // namespace attn::kernels
