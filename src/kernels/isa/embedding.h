// The embedding kernels of one ISA build as a table of function pointers with
// the public signatures: embedding.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/embedding.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/embedding.h"

namespace attn::kernels {

struct EmbeddingKernels {
  decltype(&kernels::embedding_gather) embedding_gather;
  decltype(&kernels::embedding_scatter_add) embedding_scatter_add;
};

namespace isa_scalar {
extern const EmbeddingKernels embedding_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const EmbeddingKernels embedding_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const EmbeddingKernels embedding_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
