// Corpus TER exactly as sacreBLEU 2.x computes it (metrics/ter.py and
// lib_ter.py, its reimplementation of Tercom): per segment, the fewest edits
// (insertions, deletions, substitutions, and shifts of word blocks) that turn
// the hypothesis into the closest reference; shifts are found greedily (block
// length ≤ 10, distance ≤ 50, at most 1000 candidates per segment) and scored
// with a beam-limited edit distance (beam 25 around the length-scaled
// diagonal). Corpus TER = 100 · Σ edits / Σ average reference length.
// Tokenization is sacreBLEU's default "tercom": lowercase unless case
// sensitive, optional removal of . , ? : ; ! " ( ), split on whitespace.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/bleu.h"

namespace attn::eval {

struct TerOptions {
  bool case_sensitive = false;  // sacreBLEU's default: case-insensitive (case:lc)
  bool no_punct = false;        // remove . , ? : ; ! " ( ) before splitting
};

// Edits needed to turn `hypothesis` into `reference` (tokens as ids; equal
// ids are equal words): shifts plus the final edit distance. An empty
// reference needs one deletion per hypothesis word.
std::int64_t translation_edits(std::span<const int> hypothesis, std::span<const int> reference);

// Sufficient statistics of one segment, or of a corpus when summed.
struct TerStats {
  double edits = 0.0;       // fewest edits over the references
  double ref_length = 0.0;  // average reference length in words

  void add(const TerStats& other);
};

class Ter {
 public:
  explicit Ter(TerOptions options = {});

  // Statistics of one hypothesis against its references (valid UTF-8).
  // Empty references are skipped when another one is not empty, as attn's
  // BLEU and chrF skip them; all empty counts as one empty reference.
  TerStats segment_stats(std::string_view hypothesis, std::span<const std::string> references) const;

  // sacreBLEU's _compute_score_from_stats: 100 · edits / ref_length; an
  // empty reference side gives 100 with edits and 0 without.
  static double score(const TerStats& stats);

  double corpus_score(std::span<const std::string> hypotheses,
                      std::span<const std::vector<std::string>> references) const;

  // "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:attn-0.1.0"
  std::string signature(ReferenceCount nrefs) const;

  // The tercom tokenizer: the words TER aligns.
  std::string tokenize(std::string_view segment) const;

 private:
  TerOptions options_;
};

}  // namespace attn::eval
