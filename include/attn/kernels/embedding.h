// Embedding lookup and its gradient.
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_EMBEDDING_KERNELS(X)                                                                                      \
  /* out[t, :] = scale · table[ids[t], :]; table: [vocab, d], ids: [tokens] (each                                      \
     in [0, vocab); not checked here), out: [tokens, d]. */                                                            \
  X(void, embedding_gather, (const float* table, const std::int32_t* ids, float* out, std::int64_t tokens,             \
                             std::int64_t d, float scale),                                                             \
    (table, ids, out, tokens, d, scale))                                                                               \
  /* dout: [tokens, d], ids: [tokens], dtable: [vocab, d].                                                             \
     dtable[ids[t], :] += scale · dout[t, :]. Deterministic: tokens are added in                                       \
     order; threads split the d columns, never the tokens. */                                                          \
  X(void, embedding_scatter_add, (const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,      \
                                  std::int64_t d, float scale),                                                        \
    (dout, ids, dtable, tokens, d, scale))

namespace attn::kernels {
ATTN_EMBEDDING_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
