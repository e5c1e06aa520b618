// Long training examples: with --join-pairs K each example of an epoch joins
// 1…K consecutive pairs of the corpus, source with source and target with
// target, so inputs up to K sentences long are in the training distribution.
// The sizes are drawn afresh each epoch from (seed, epoch): a pure function,
// so a resumed run rebuilds the same epoch. Joining the subword ids equals
// encoding the sentences joined by one space (BPE never crosses a space),
// which is how the long test sets are made (experiments/make_long_test.py).
//
// With --drop-final-stop P, a share P of an epoch's examples (drawn from
// (seed, epoch) too, in a stream of their own: the groups stay the same)
// lose their source's final stop: a model trained on joined pairs has
// otherwise only seen a source end at a stop, and on a source without one it
// ends its sentence and begins another (docs/claims.md, "Run-ons"). The
// target keeps its stop, as Multi30k's references do, so the model learns to
// finish the sentence and stop where the source ends.
#pragma once
#include <cstdint>
#include <span>

#include "attn/text/bpe.h"
#include "attn/train/corpus.h"

namespace attn::train {

// The epoch's examples: the corpus walked in order, cut into groups whose
// size is drawn uniformly from 1…max_pairs. A group ends early where the
// corpus skipped a line (the pairs around it are not neighbours) or where
// the next pair would take a side over max_len subwords (max_len ≤ 0: no
// limit). max_pairs == 1 and no dropped stops give the corpus's examples
// unchanged; the groups do not depend on drop_final_stop.
struct EpochShape {
  std::int64_t max_pairs = 1;          // --join-pairs
  std::int64_t max_len = 0;            // --max-len (≤ 0: no limit)
  double drop_final_stop = 0.0;        // --drop-final-stop: share of examples, 0…1
  std::vector<std::int32_t> stop_ids;  // final_stop_ids(bpe): what counts as a final stop
  bool reshapes() const { return max_pairs > 1 || drop_final_stop > 0.0; }
};
std::vector<Example> join_pairs(const EncodedCorpus& corpus, const EpochShape& shape, std::uint64_t seed,
                                std::int64_t epoch);

// The subword ids of a final stop: ".", "!" and "?" as pieces of their own
// (the pre-tokenizer never merges punctuation into a word), with and without
// the word marker, or as byte fallbacks.
std::vector<std::int32_t> final_stop_ids(const text::Bpe& bpe);

// Removes the source's trailing stops ("..." is three) and a bare word marker
// left before them; true when something was removed.
bool drop_final_stop(std::vector<std::int32_t>& src, std::span<const std::int32_t> stop_ids);

// The joined validation set: lines k·i … k·i+k−1 joined by one space on both
// sides; only whole groups (as experiments/make_long_test.py writes them).
ParallelText join_lines(const ParallelText& text, std::int64_t k);

}  // namespace attn::train
