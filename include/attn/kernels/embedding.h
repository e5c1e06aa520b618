// Embedding lookup and its gradient. Each kernel is built per ISA and picked
// at run time (src/kernels/kernel_table.h).
#pragma once
#include <cstdint>

namespace attn::kernels {

// table: [vocab, d], ids: [tokens] (each in [0, vocab); not checked here),
// out: [tokens, d], not aliasing table. out[t, :] = scale · table[ids[t], :].
// Threads over the tokens above ~16k elements.
void embedding_gather(const float* table, const std::int32_t* ids, float* out, std::int64_t tokens, std::int64_t d,
                      float scale);

// dout: [tokens, d], ids: [tokens], dtable: [vocab, d], not aliasing dout.
// dtable[ids[t], :] += scale · dout[t, :]. Deterministic: tokens are added in
// order; threads split the d columns, never the tokens.
void embedding_scatter_add(const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,
                           std::int64_t d, float scale);

}  // namespace attn::kernels
