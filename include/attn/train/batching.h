// Token-based batches from length buckets (fairseq's batch_by_size): examples
// sorted by length, cut into batches of at most max_tokens padded tokens on
// either side, the batch order shuffled per epoch. A pure function of
// (corpus, max_tokens, seed, epoch), so a resumed run regenerates the same
// epoch and skips the batches it already did.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/model/batch.h"
#include "attn/train/corpus.h"

namespace attn::train {

using BatchIndices = std::vector<std::int64_t>;  // indices into EncodedCorpus::examples

// shuffle == false: sorted order, no shuffling (validation).
std::vector<BatchIndices> plan_batches(const std::vector<Example>& examples, std::int64_t max_tokens,
                                       std::uint64_t seed, std::int64_t epoch, bool shuffle);

model::Batch gather_batch(const std::vector<Example>& examples, const BatchIndices& indices);

}  // namespace attn::train
