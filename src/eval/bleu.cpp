#include "attn/eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/eval/python_text.h"
#include "attn/eval/segments.h"
#include "attn/version.h"

namespace attn::eval {
namespace {

// Counts of every n-gram of order 1..max_order; an n-gram is its tokens
// joined by single spaces (tokens never contain whitespace, so this is
// unambiguous across orders too).
using NgramCounts = std::unordered_map<std::string, std::int64_t>;

NgramCounts count_ngrams(const std::vector<std::string_view>& tokens, int max_order) {
  NgramCounts counts;
  counts.reserve(tokens.size() * static_cast<std::size_t>(max_order));
  std::string key;
  for (std::size_t start = 0; start < tokens.size(); ++start) {
    key.clear();
    for (int n = 1; n <= max_order && start + static_cast<std::size_t>(n) <= tokens.size(); ++n) {
      if (n > 1) key.push_back(' ');
      key.append(tokens[start + static_cast<std::size_t>(n) - 1]);
      ++counts[key];
    }
  }
  return counts;
}

// sacreBLEU's my_log: log with log(0) floored to -9999999999.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// The reference length closest to the hypothesis length; ties go to the shorter.
std::int64_t closest_ref_len(std::int64_t hyp_len, const std::vector<std::int64_t>& ref_lens) {
  std::int64_t closest_diff = -1, closest_len = -1;
  for (std::int64_t ref_len : ref_lens) {
    const std::int64_t diff = std::llabs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

}  // namespace

Smoothing parse_smoothing(std::string_view name) {
  if (name == "exp") return Smoothing::exp;
  if (name == "none") return Smoothing::none;
  if (name == "floor") return Smoothing::floor;
  if (name == "add-k") return Smoothing::add_k;
  throw Error("unknown smoothing method '" + std::string(name) + "'; use exp, floor, add-k or none");
}

std::string_view smoothing_name(Smoothing smoothing) {
  switch (smoothing) {
    case Smoothing::none: return "none";
    case Smoothing::floor: return "floor";
    case Smoothing::add_k: return "add-k";
    case Smoothing::exp: return "exp";
  }
  return "exp";
}

void BleuStats::add(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  if (correct.size() < other.correct.size()) correct.resize(other.correct.size(), 0);
  if (total.size() < other.total.size()) total.resize(other.total.size(), 0);
  for (std::size_t n = 0; n < other.correct.size(); ++n) correct[n] += other.correct[n];
  for (std::size_t n = 0; n < other.total.size(); ++n) total[n] += other.total[n];
}

std::string BleuScore::verbose() const {
  std::string text;
  for (std::size_t n = 0; n < precisions.size(); ++n) {
    if (n > 0) text.push_back('/');
    text += format_fixed(precisions[n], 1);
  }
  const double ratio = ref_len != 0 ? static_cast<double>(hyp_len) / static_cast<double>(ref_len) : 0.0;
  text += " (BP = " + format_fixed(brevity_penalty, 3) + " ratio = " + format_fixed(ratio, 3) +
          " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return text;
}

BleuScore compute_bleu(std::vector<double> correct, std::vector<double> total, std::int64_t hyp_len,
                       std::int64_t ref_len, const BleuOptions& options) {
  const int max_order = options.max_ngram_order;
  require(max_order >= 1 && static_cast<int>(correct.size()) == max_order &&
              static_cast<int>(total.size()) == max_order,
          "BLEU statistics must have one count per n-gram order");
  double smooth_value = 0.0;
  if (options.smoothing == Smoothing::floor) smooth_value = options.smooth_value.value_or(0.1);
  if (options.smoothing == Smoothing::add_k) smooth_value = options.smooth_value.value_or(1.0);

  BleuScore result;
  result.hyp_len = hyp_len;
  result.ref_len = ref_len;
  result.precisions.assign(static_cast<std::size_t>(max_order), 0.0);
  if (hyp_len < ref_len) {
    result.brevity_penalty = hyp_len > 0 ? std::exp(1.0 - static_cast<double>(ref_len) / static_cast<double>(hyp_len))
                                         : 0.0;
  } else {
    result.brevity_penalty = 1.0;
  }
  // No match at any order: 0 without smoothing (sacreBLEU #141).
  if (std::all_of(correct.begin(), correct.end(), [](double c) { return c == 0.0; })) return result;

  double smooth_mteval = 1.0;
  int effective_order = max_order;
  for (int n = 1; n <= max_order; ++n) {
    const auto i = static_cast<std::size_t>(n - 1);
    if (options.smoothing == Smoothing::add_k && n > 1) {
      correct[i] += smooth_value;
      total[i] += smooth_value;
    }
    if (total[i] == 0.0) break;
    if (options.effective_order) effective_order = n;
    if (correct[i] == 0.0) {
      if (options.smoothing == Smoothing::exp) {
        smooth_mteval *= 2.0;
        result.precisions[i] = 100.0 / (smooth_mteval * total[i]);
      } else if (options.smoothing == Smoothing::floor) {
        result.precisions[i] = 100.0 * smooth_value / total[i];
      }
    } else {
      result.precisions[i] = 100.0 * correct[i] / total[i];
    }
  }
  // Summed left to right from 0, as Python's sum() does (before 3.12).
  double log_sum = 0.0;
  for (int n = 0; n < effective_order; ++n) log_sum += floored_log(result.precisions[static_cast<std::size_t>(n)]);
  result.score = result.brevity_penalty * std::exp(log_sum / effective_order);
  return result;
}

Bleu::Bleu(BleuOptions options) : options_(options) {
  require(options_.max_ngram_order >= 1, "BLEU's maximum n-gram order must be at least 1");
  if (options_.smooth_value)
    require(options_.smoothing == Smoothing::floor || options_.smoothing == Smoothing::add_k,
            "a smoothing value only applies to the floor and add-k methods");
}

std::string Bleu::preprocess(std::string_view segment) const {
  if (options_.lowercase) {
    const std::string lowered = python_lower(segment);
    return tokenize(options_.tokenizer, python_rstrip(lowered));
  }
  return tokenize(options_.tokenizer, python_rstrip(segment));
}

BleuStats Bleu::segment_stats(std::string_view hypothesis, std::span<const std::string> references) const {
  const int max_order = options_.max_ngram_order;
  NgramCounts ref_counts;
  std::vector<std::int64_t> ref_lens;
  for (const std::string_view reference : segment_references(references)) {
    const std::string tokenized = preprocess(reference);
    const std::vector<std::string_view> tokens = python_split(tokenized);
    ref_lens.push_back(static_cast<std::int64_t>(tokens.size()));
    for (auto& [ngram, count] : count_ngrams(tokens, max_order)) {
      std::int64_t& merged = ref_counts[ngram];
      merged = std::max(merged, count);
    }
  }

  const std::string tokenized = preprocess(hypothesis);
  const std::vector<std::string_view> tokens = python_split(tokenized);
  BleuStats stats;
  stats.hyp_len = static_cast<std::int64_t>(tokens.size());
  stats.ref_len = closest_ref_len(stats.hyp_len, ref_lens);
  stats.correct.assign(static_cast<std::size_t>(max_order), 0);
  stats.total.assign(static_cast<std::size_t>(max_order), 0);
  for (const auto& [ngram, count] : count_ngrams(tokens, max_order)) {
    const auto order = static_cast<std::size_t>(std::count(ngram.begin(), ngram.end(), ' '));
    stats.total[order] += count;
    if (auto hit = ref_counts.find(ngram); hit != ref_counts.end())
      stats.correct[order] += std::min(count, hit->second);
  }
  return stats;
}

BleuScore Bleu::corpus_score(std::span<const std::string> hypotheses,
                             std::span<const std::vector<std::string>> references) const {
  require(!hypotheses.empty(), "there are no hypotheses to score");
  require(!references.empty(), "BLEU needs at least one reference stream");
  BleuStats corpus;
  corpus.correct.assign(static_cast<std::size_t>(options_.max_ngram_order), 0);
  corpus.total.assign(static_cast<std::size_t>(options_.max_ngram_order), 0);
  for_each_segment(hypotheses, references, [&](std::string_view hypothesis, std::span<const std::string> refs) {
    corpus.add(segment_stats(hypothesis, refs));
  });
  return compute_bleu(std::vector<double>(corpus.correct.begin(), corpus.correct.end()),
                      std::vector<double>(corpus.total.begin(), corpus.total.end()), corpus.hyp_len, corpus.ref_len,
                      options_);
}

BleuScore Bleu::sentence_score(std::string_view hypothesis, std::span<const std::string> references) const {
  const BleuStats stats = segment_stats(hypothesis, references);
  return compute_bleu(std::vector<double>(stats.correct.begin(), stats.correct.end()),
                      std::vector<double>(stats.total.begin(), stats.total.end()), stats.hyp_len, stats.ref_len,
                      options_);
}

std::string Bleu::signature(ReferenceCount nrefs) const {
  std::string smooth(smoothing_name(options_.smoothing));
  if (options_.smoothing == Smoothing::floor || options_.smoothing == Smoothing::add_k) {
    const double value = options_.smooth_value.value_or(options_.smoothing == Smoothing::floor ? 0.1 : 1.0);
    smooth.append("[").append(format_fixed(value, 2)).append("]");
  }
  std::string text = "nrefs:";
  text.append(nrefs < 0 ? std::string("var") : std::to_string(nrefs));
  text.append("|case:").append(options_.lowercase ? "lc" : "mixed");
  text.append("|eff:").append(options_.effective_order ? "yes" : "no");
  text.append("|tok:").append(tokenizer_name(options_.tokenizer));
  text.append("|smooth:").append(smooth);
  text.append("|version:").append(signature_version());
  return text;
}

ReferenceCount count_references(std::span<const std::vector<std::string>> references) {
  // sacreBLEU counts the non-empty references of each segment; a segment with
  // none it cannot score at all, so such segments do not make the count vary:
  // one reference file is nrefs:1 whatever its blank lines.
  std::set<int> counts;
  const std::size_t segments = references.empty() ? 0 : references.front().size();
  for (std::size_t i = 0; i < segments; ++i) {
    int count = 0;
    for (const auto& stream : references)
      if (i < stream.size() && !stream[i].empty()) ++count;
    if (count > 0) counts.insert(count);
  }
  if (counts.empty()) return static_cast<ReferenceCount>(references.size());
  return counts.size() == 1 ? *counts.begin() : -1;
}

std::string signature_version() { return std::string("attn-") + ATTN_VERSION; }

}  // namespace attn::eval
