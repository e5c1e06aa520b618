// Embedding rows: the gather splits tokens across threads; the scatter splits
// columns, so that repeated ids add up in token order whatever the threads.
#include "isa.h"

#include <algorithm>

#include "attn/kernels/embedding.h"

#include "kernels.h"
#include "parallel_for.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
constexpr std::int64_t kColumnBlock = 64;  // columns per unit of scatter work (a few cache lines)
}  // namespace

void embedding_gather(const float* table, const std::int32_t* ids, float* out, std::int64_t tokens, std::int64_t d,
                      float scale) {
  parallel_for(tokens, tokens * d, [=](std::int64_t t) {
    const float* row = table + static_cast<std::int64_t>(ids[t]) * d;
    float* out_row = out + t * d;
    for (std::int64_t j = 0; j < d; ++j) out_row[j] = scale * row[j];
  });
}

void embedding_scatter_add(const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,
                           std::int64_t d, float scale) {
  const std::int64_t blocks = (d + kColumnBlock - 1) / kColumnBlock;
  parallel_for(blocks, tokens * d, [=](std::int64_t blk) {
    const std::int64_t j0 = blk * kColumnBlock, j1 = std::min(d, j0 + kColumnBlock);
    for (std::int64_t t = 0; t < tokens; ++t) {
      float* table_row = dtable + static_cast<std::int64_t>(ids[t]) * d;
      const float* dout_row = dout + t * d;
      for (std::int64_t j = j0; j < j1; ++j) table_row[j] += scale * dout_row[j];
    }
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
