// Learning BPE merges from a corpus (what Bpe::learn runs).
//
// 1. Every line is pre-tokenized (pretokenizer.h) and identical pre-tokens
//    are counted once, so the work scales with distinct words, not tokens.
// 2. Characters: every character seen at least min_frequency times gets a
//    piece, most frequent first (ties by code point), as many as fit in
//    vocab_size. Rarer characters are encoded by byte fallback and act as
//    barriers that no merge spans. A literal U+2581 in the text is always
//    byte-encoded so that it never reads back as a space.
// 3. Merges: repeatedly the most frequent adjacent pair becomes a new piece,
//    until the vocabulary has vocab_size pieces or no pair occurs
//    min_frequency times. Ties go to the lexicographically smaller pair of
//    piece strings (compared as bytes), so a corpus gives the same merges
//    on every machine, whatever the order of lines. When a merged string is
//    already a piece (e.g. "ab"+"c" after "a"+"bc") the merge is recorded
//    but maps onto that piece, so vocab_size counts distinct pieces.
// The incremental algorithm keeps pair counts, an index pair -> words that
// may contain it, and a max-heap with lazy deletion: a merge only visits
// the words that contain its pair.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/text/vocab.h"

namespace attn::text {

struct BpeOptions {
  // Total pieces, including the kFirstLearned (261) fixed ones; must be at
  // least that. Fewer pieces result when the corpus runs out of pairs.
  std::int32_t vocab_size = 8000;
  // A character or pair seen fewer times than this is not learned; >= 1.
  std::int32_t min_frequency = 2;
};

using MergePair = std::pair<std::int32_t, std::int32_t>;  // (left id, right id)

struct LearnedBpe {
  Vocab vocab;
  std::vector<MergePair> merges;  // in learning order: index = rank
};

// Throws attn::Error on options out of range.
LearnedBpe learn_bpe(const std::vector<std::string>& lines, const BpeOptions& options);

}  // namespace attn::text
