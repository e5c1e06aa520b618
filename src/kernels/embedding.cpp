#include "attn/kernels/embedding.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/embedding.inc"
}
namespace isa_avx2 {
#include "isa/embedding.inc"
}
namespace isa_avx512 {
#include "isa/embedding.inc"
}

void embedding_gather(const float* table, const std::int32_t* ids, float* out, std::int64_t tokens, std::int64_t d,
                      float scale) {
  ATTN_DISPATCH(embedding_gather, table, ids, out, tokens, d, scale)
}
void embedding_scatter_add(const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,
                           std::int64_t d, float scale) {
  ATTN_DISPATCH(embedding_scatter_add, dout, ids, dtable, tokens, d, scale)
}

}  // namespace attn::kernels
