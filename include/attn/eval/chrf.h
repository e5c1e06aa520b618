// Corpus chrF exactly as sacreBLEU 2.x computes it (metrics/chrf.py):
// character n-grams (code points, whitespace removed) of orders 1..6 per
// segment; with several references, the segment keeps the statistics of the
// reference with the best sentence-level F-score; the statistics are summed
// over the corpus, and the F-beta score (beta 2) is taken of the precision
// and recall averaged over the orders present ("effective order", sacreBLEU's
// default) or, with eps_smoothing, averaged per-order F-scores (chrF++.py).
// With word_order > 0 (2: chrF++), word n-grams of orders 1..word_order
// follow the character orders in the statistics and the averages; words are
// split on whitespace with one leading or trailing ASCII punctuation mark
// split off (sacreBLEU's _remove_punctuation).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/bleu.h"

namespace attn::eval {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 gives chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;     // keep whitespace inside the character n-grams
  bool eps_smoothing = false;  // chrF++.py / NLTK / Moses averaging instead of effective order
};

// Per character order n = 1..char_order, then per word order, three counts: hypothesis n-grams (0 when the
// reference has none of that order), reference n-grams, matches.
struct ChrfStats {
  std::vector<std::int64_t> counts;  // [3 * (char_order + word_order)]: hyp, ref, match per order

  void add(const ChrfStats& other);
};

struct ChrfScore {
  double score = 0.0;  // 0..100
  std::string name;    // "chrF2", "chrF2++"
};

class Chrf {
 public:
  explicit Chrf(ChrfOptions options = {});

  // Statistics of one hypothesis against its references (raw text, valid
  // UTF-8; empty references are ignored; at least one must be non-empty).
  ChrfStats segment_stats(std::string_view hypothesis, std::span<const std::string> references) const;

  // sacreBLEU's _compute_f_score, 0..100.
  double f_score(const ChrfStats& stats) const;

  // chrF of a corpus; references[k][i] is the k-th reference of hypothesis i.
  ChrfScore corpus_score(std::span<const std::string> hypotheses,
                         std::span<const std::vector<std::string>> references) const;

  ChrfScore sentence_score(std::string_view hypothesis, std::span<const std::string> references) const;

  // sacreBLEU 2.x's signature, e.g. "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0".
  std::string signature(ReferenceCount nrefs) const;

  std::string name() const {
    return "chrF" + std::to_string(options_.beta) + std::string(static_cast<std::size_t>(options_.word_order), '+');
  }
  const ChrfOptions& options() const { return options_; }

 private:
  std::u32string preprocess(std::string_view segment) const;

  ChrfOptions options_;
};

}  // namespace attn::eval
