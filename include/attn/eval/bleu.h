// Corpus BLEU exactly as sacreBLEU 2.x computes it (metrics/bleu.py):
// per-segment clipped n-gram counts against the references (counts merged by
// maximum over references), the closest reference length (ties → shorter),
// corpus sums, brevity penalty, then the geometric mean of the precisions
// with sacreBLEU's smoothing ('exp' by default: the mteval-v13a rule).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/tokenizer.h"

namespace attn::eval {

enum class Smoothing { none, floor, add_k, exp };

// "none", "floor", "add-k" or "exp"; throws Error otherwise.
Smoothing parse_smoothing(std::string_view name);
std::string_view smoothing_name(Smoothing smoothing);

struct BleuOptions {
  Tokenizer tokenizer = Tokenizer::v13a;
  bool lowercase = false;
  Smoothing smoothing = Smoothing::exp;
  std::optional<double> smooth_value;  // unset: 0.1 for floor, 1 for add-k
  int max_ngram_order = 4;
  // Average only over the orders the hypotheses have n-grams of (meant for
  // sentence-level BLEU; sacreBLEU's corpus default is off).
  bool effective_order = false;
};

// Sufficient statistics of one segment, or of a corpus when summed.
struct BleuStats {
  std::int64_t hyp_len = 0;
  std::int64_t ref_len = 0;
  std::vector<std::int64_t> correct;  // [max_ngram_order] clipped matches per order
  std::vector<std::int64_t> total;    // [max_ngram_order] hypothesis n-grams per order

  void add(const BleuStats& other);
};

struct BleuScore {
  double score = 0.0;              // 0..100
  std::vector<double> precisions;  // [max_ngram_order], percent
  double brevity_penalty = 0.0;
  std::int64_t hyp_len = 0;
  std::int64_t ref_len = 0;

  // sacreBLEU's verbose part: "82.4/59.5/43.5/32.2 (BP = 1.000 ratio = 1.000
  // hyp_len = 18 ref_len = 18)".
  std::string verbose() const;
};

// sacreBLEU's BLEU.compute_bleu on statistics (counts as doubles since
// add-k smoothing adds a fractional value to them).
BleuScore compute_bleu(std::vector<double> correct, std::vector<double> total, std::int64_t hyp_len,
                       std::int64_t ref_len, const BleuOptions& options);

// Number of references per segment for the signature: the count when every
// segment has the same number of non-empty references, else -1 ("var").
using ReferenceCount = int;

class Bleu {
 public:
  explicit Bleu(BleuOptions options = {});

  // Statistics of one hypothesis against its references (raw text, valid
  // UTF-8; empty references are ignored; at least one must be non-empty).
  BleuStats segment_stats(std::string_view hypothesis, std::span<const std::string> references) const;

  // BLEU of a corpus. references[k][i] is the k-th reference of hypothesis
  // i; every stream has hypotheses.size() lines. Throws Error when the
  // lengths differ or a segment has only empty references.
  BleuScore corpus_score(std::span<const std::string> hypotheses,
                         std::span<const std::vector<std::string>> references) const;

  // BLEU of one segment (sacreBLEU's sentence_score).
  BleuScore sentence_score(std::string_view hypothesis, std::span<const std::string> references) const;

  // The reproducibility signature in sacreBLEU 2.x's format, e.g.
  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-0.1.0".
  std::string signature(ReferenceCount nrefs) const;

  const BleuOptions& options() const { return options_; }

 private:
  std::string preprocess(std::string_view segment) const;

  BleuOptions options_;
};

// The signature's nrefs value for a corpus (see ReferenceCount): counts the
// non-empty references of each segment, segments with none left out (the
// number of reference streams when every segment has none).
ReferenceCount count_references(std::span<const std::vector<std::string>> references);

// The signature's version field: "attn-" and this program's version. Not
// sacreBLEU's version, so a score is never mistaken for sacreBLEU's own.
std::string signature_version();

}  // namespace attn::eval
