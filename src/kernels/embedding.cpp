// The run-time dispatch of the embedding kernels: each calls the active ISA's
// build (dispatch.h).
#include "attn/kernels/embedding.h"

#include "dispatch.h"
#include "isa/embedding.h"

namespace attn::kernels {

namespace {
const EmbeddingKernels& active() {
  return active_build(isa_scalar::embedding_kernels, isa_avx2::embedding_kernels, isa_avx512::embedding_kernels);
}
}  // namespace

void embedding_gather(const float* table, const std::int32_t* ids, float* out, std::int64_t tokens, std::int64_t d,
                      float scale) {
  return active().embedding_gather(table, ids, out, tokens, d, scale);
}

void embedding_scatter_add(const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,
                           std::int64_t d, float scale) {
  return active().embedding_scatter_add(dout, ids, dtable, tokens, d, scale);
}

}  // namespace attn::kernels
