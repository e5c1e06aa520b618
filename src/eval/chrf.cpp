#include "attn/eval/chrf.h"

#include <algorithm>
#include <unordered_map>

#include "attn/core/error.h"
#include "attn/eval/python_text.h"
#include "attn/eval/segments.h"

namespace attn::eval {
namespace {

// Character n-gram counts of one order; keys view the segment's code points.
using CharNgramCounts = std::unordered_map<std::u32string_view, std::int64_t>;

CharNgramCounts count_char_ngrams(std::u32string_view text, std::size_t n) {
  CharNgramCounts counts;
  if (text.size() < n) return counts;
  counts.reserve(text.size() - n + 1);
  for (std::size_t i = 0; i + n <= text.size(); ++i) ++counts[text.substr(i, n)];
  return counts;
}

// Word n-gram counts of one order; an n-gram is its words joined by spaces.
using WordNgramCounts = std::unordered_map<std::string, std::int64_t>;

WordNgramCounts count_word_ngrams(const std::vector<std::string_view>& words, std::size_t n) {
  WordNgramCounts counts;
  for (std::size_t i = 0; i + n <= words.size(); ++i) {
    std::string key(words[i]);
    for (std::size_t k = 1; k < n; ++k) key.append(" ").append(words[i + k]);
    ++counts[key];
  }
  return counts;
}

bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// sacreBLEU's _remove_punctuation: a word of two or more characters loses a
// trailing ASCII punctuation mark as a word of its own, or else a leading
// one ("(hi)" -> "(hi", ")"). Views point into `text`.
std::vector<std::string_view> split_words_and_punctuation(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::string_view word : python_split(text)) {
    const bool one_character = decode_utf8(word).size() == 1;
    if (!one_character && is_ascii_punctuation(word.back())) {
      words.push_back(word.substr(0, word.size() - 1));
      words.push_back(word.substr(word.size() - 1));
    } else if (!one_character && is_ascii_punctuation(word.front())) {
      words.push_back(word.substr(0, 1));
      words.push_back(word.substr(1));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

template <typename Counts>
std::int64_t total_count(const Counts& counts) {
  std::int64_t total = 0;
  for (const auto& entry : counts) total += entry.second;
  return total;
}

// sacreBLEU's _get_match_statistics for one order: hypothesis n-grams (0
// when the reference has none of this order), reference n-grams, matches.
template <typename Counts>
void append_match_counts(const Counts& hyp_ngrams, const Counts& ref_ngrams, ChrfStats& stats) {
  std::int64_t hyp_count = 0, matches = 0;
  for (const auto& [ngram, count] : hyp_ngrams) {
    hyp_count += count;
    if (auto hit = ref_ngrams.find(ngram); hit != ref_ngrams.end()) matches += std::min(count, hit->second);
  }
  stats.counts.push_back(ref_ngrams.empty() ? 0 : hyp_count);
  stats.counts.push_back(total_count(ref_ngrams));
  stats.counts.push_back(matches);
}

}  // namespace

void ChrfStats::add(const ChrfStats& other) {
  if (counts.size() < other.counts.size()) counts.resize(other.counts.size(), 0);
  for (std::size_t i = 0; i < other.counts.size(); ++i) counts[i] += other.counts[i];
}

Chrf::Chrf(ChrfOptions options) : options_(options) {
  require(options_.char_order >= 1, "chrF's character n-gram order must be at least 1");
  require(options_.word_order >= 0, "chrF's word n-gram order must not be negative");
  require(options_.beta >= 0, "chrF's beta must not be negative");
}

std::u32string Chrf::preprocess(std::string_view segment) const {
  std::u32string code_points = options_.lowercase ? decode_utf8(python_lower(segment)) : decode_utf8(segment);
  return options_.whitespace ? code_points : without_python_space(code_points);
}

ChrfStats Chrf::segment_stats(std::string_view hypothesis, std::span<const std::string> references) const {
  const auto orders = static_cast<std::size_t>(options_.char_order);
  const std::u32string hyp = preprocess(hypothesis);
  std::vector<CharNgramCounts> hyp_ngrams;
  for (std::size_t n = 1; n <= orders; ++n) hyp_ngrams.push_back(count_char_ngrams(hyp, n));

  const std::string hyp_text = options_.lowercase ? python_lower(hypothesis) : std::string(hypothesis);
  const auto word_orders = static_cast<std::size_t>(options_.word_order);
  std::vector<WordNgramCounts> hyp_words;
  for (std::size_t n = 1; n <= word_orders; ++n)
    hyp_words.push_back(count_word_ngrams(split_words_and_punctuation(hyp_text), n));

  ChrfStats best;
  double best_f = -1.0;
  for (const std::string_view reference : segment_references(references)) {
    const std::u32string ref = preprocess(reference);
    ChrfStats stats;
    stats.counts.reserve(3 * orders);
    for (std::size_t n = 1; n <= orders; ++n) {
      append_match_counts(hyp_ngrams[n - 1], count_char_ngrams(ref, n), stats);
    }
    const std::string ref_text = options_.lowercase ? python_lower(reference) : std::string(reference);
    const std::vector<std::string_view> ref_words = split_words_and_punctuation(ref_text);
    for (std::size_t n = 1; n <= word_orders; ++n) {
      append_match_counts(hyp_words[n - 1], count_word_ngrams(ref_words, n), stats);
    }
    const double f = f_score(stats);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

double Chrf::f_score(const ChrfStats& stats) const {
  const int orders = options_.char_order + options_.word_order;
  require(static_cast<int>(stats.counts.size()) == 3 * orders, "chrF statistics must have three counts per order");
  constexpr double eps = 1e-16;
  const double factor = static_cast<double>(options_.beta) * options_.beta;
  double score = 0.0, avg_precision = 0.0, avg_recall = 0.0;
  int effective_order = 0;
  for (int i = 0; i < orders; ++i) {
    const std::int64_t n_hyp = stats.counts[static_cast<std::size_t>(3 * i)];
    const std::int64_t n_ref = stats.counts[static_cast<std::size_t>(3 * i + 1)];
    const std::int64_t n_match = stats.counts[static_cast<std::size_t>(3 * i + 2)];
    const double precision = n_hyp > 0 ? static_cast<double>(n_match) / static_cast<double>(n_hyp) : eps;
    const double recall = n_ref > 0 ? static_cast<double>(n_match) / static_cast<double>(n_ref) : eps;
    const double denominator = factor * precision + recall;
    score += denominator > 0.0 ? (1.0 + factor) * precision * recall / denominator : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_precision += precision;
      avg_recall += recall;
      ++effective_order;
    }
  }
  if (options_.eps_smoothing) return 100.0 * score / orders;
  if (effective_order == 0) return 0.0;
  avg_precision /= effective_order;
  avg_recall /= effective_order;
  if (avg_precision + avg_recall == 0.0) return 0.0;
  score = (1.0 + factor) * avg_precision * avg_recall;
  score /= factor * avg_precision + avg_recall;
  return 100.0 * score;
}

ChrfScore Chrf::corpus_score(std::span<const std::string> hypotheses,
                             std::span<const std::vector<std::string>> references) const {
  require(!hypotheses.empty(), "there are no hypotheses to score");
  require(!references.empty(), "chrF needs at least one reference stream");
  ChrfStats corpus;
  corpus.counts.assign(3 * static_cast<std::size_t>(options_.char_order + options_.word_order), 0);
  for_each_segment(hypotheses, references, [&](std::string_view hypothesis, std::span<const std::string> refs) {
    corpus.add(segment_stats(hypothesis, refs));
  });
  return {f_score(corpus), name()};
}

ChrfScore Chrf::sentence_score(std::string_view hypothesis, std::span<const std::string> references) const {
  return {f_score(segment_stats(hypothesis, references)), name()};
}

std::string Chrf::signature(ReferenceCount nrefs) const {
  std::string text = "nrefs:";
  text.append(nrefs < 0 ? std::string("var") : std::to_string(nrefs));
  text.append("|case:").append(options_.lowercase ? "lc" : "mixed");
  text.append("|eff:").append(options_.eps_smoothing ? "no" : "yes");
  text.append("|nc:").append(std::to_string(options_.char_order));
  text.append("|nw:").append(std::to_string(options_.word_order));
  text.append("|space:").append(options_.whitespace ? "yes" : "no");
  text.append("|version:").append(signature_version());
  return text;
}

}  // namespace attn::eval
