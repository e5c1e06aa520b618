// Long training examples: with --join-pairs K each example of an epoch joins
// 1…K consecutive pairs of the corpus, source with source and target with
// target, so inputs up to K sentences long are in the training distribution.
// The sizes are drawn afresh each epoch from (seed, epoch): a pure function,
// so a resumed run rebuilds the same epoch. Joining the subword ids equals
// encoding the sentences joined by one space (BPE never crosses a space),
// which is how the long test sets are made (experiments/make_long_test.py).
#pragma once
#include <cstdint>

#include "attn/train/corpus.h"

namespace attn::train {

// The epoch's examples: the corpus walked in order, cut into groups whose
// size is drawn uniformly from 1…max_pairs. A group ends early where the
// corpus skipped a line (the pairs around it are not neighbours) or where
// the next pair would take a side over max_len subwords (max_len ≤ 0: no
// limit). max_pairs == 1 gives the corpus's examples unchanged.
std::vector<Example> join_pairs(const EncodedCorpus& corpus, std::int64_t max_pairs, std::int64_t max_len,
                                std::uint64_t seed, std::int64_t epoch);

// The joined validation set: lines k·i … k·i+k−1 joined by one space on both
// sides; only whole groups (as experiments/make_long_test.py writes them).
ParallelText join_lines(const ParallelText& text, std::int64_t k);

}  // namespace attn::train
