// The shift search follows lib_ter.py step by step, including its tie
// breaking (gain, then block length, then earliest hypothesis position, then
// earliest target) and its candidate budget, because those heuristics decide
// which of several equally cheap edit sequences is found, and so the score.
// sacreBLEU caches edit-distance rows by hypothesis prefix; that cache only
// saves time, so each distance here is computed afresh.
#include "attn/eval/ter.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "attn/core/error.h"
#include "attn/eval/python_text.h"
#include "attn/eval/segments.h"

namespace attn::eval {
namespace {

constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDistance = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
constexpr std::int64_t kInfinity = 10'000'000'000'000'000;

// Edit operations of a trace that rewrites the hypothesis into the reference.
constexpr char kMatch = ' ', kSubstitute = 's', kInsert = 'i', kDelete = 'd', kUndefined = 'x';

struct Cell {
  std::int64_t cost = kInfinity;
  char op = kUndefined;
};

struct EditDistance {
  std::int64_t cost = 0;
  std::string trace;  // one op per step, from the start
};

// Levenshtein distance over a band of the matrix around the diagonal scaled
// by the length ratio (lib_ter.py's BeamEditDistance); ties prefer match or
// substitution, then deletion, then insertion.
EditDistance beam_edit_distance(std::span<const int> hyp, std::span<const int> ref) {
  const std::size_t n_hyp = hyp.size(), n_ref = ref.size();
  std::vector<std::vector<Cell>> dist(n_hyp + 1, std::vector<Cell>(n_ref + 1));
  for (std::size_t j = 0; j <= n_ref; ++j) dist[0][j] = {static_cast<std::int64_t>(j), kInsert};
  const double length_ratio = n_hyp > 0 ? static_cast<double>(n_ref) / static_cast<double>(n_hyp) : 1.0;
  const long beam = kBeamWidth < length_ratio / 2 ? static_cast<long>(std::ceil(length_ratio / 2 + kBeamWidth))
                                                  : kBeamWidth;
  for (std::size_t i = 1; i <= n_hyp; ++i) {
    const auto diagonal = static_cast<long>(std::floor(static_cast<double>(i) * length_ratio));
    const long min_j = std::max(0L, diagonal - beam);
    long max_j = std::min(static_cast<long>(n_ref) + 1, diagonal + beam);
    if (i == n_hyp) max_j = static_cast<long>(n_ref) + 1;
    for (long jj = min_j; jj < max_j; ++jj) {
      const auto j = static_cast<std::size_t>(jj);
      Cell& cell = dist[i][j];
      if (j == 0) {
        cell = {dist[i - 1][0].cost + 1, kDelete};
        continue;
      }
      const bool same = hyp[i - 1] == ref[j - 1];
      const Cell options[3] = {{dist[i - 1][j - 1].cost + (same ? 0 : 1), same ? kMatch : kSubstitute},
                               {dist[i - 1][j].cost + 1, kDelete},
                               {dist[i][j - 1].cost + 1, kInsert}};
      for (const Cell& option : options)
        if (cell.cost > option.cost) cell = option;
    }
  }
  EditDistance result;
  result.cost = dist[n_hyp][n_ref].cost;
  std::size_t i = n_hyp, j = n_ref;
  while (i > 0 || j > 0) {
    const char op = dist[i][j].op;
    result.trace.push_back(op);
    if (op == kMatch || op == kSubstitute) {
      --i;
      --j;
    } else if (op == kInsert) {
      --j;
    } else if (op == kDelete) {
      --i;
    } else {
      throw Error("TER's edit distance left its beam; please report this segment");
    }
  }
  std::reverse(result.trace.begin(), result.trace.end());
  return result;
}

// Which hypothesis position each reference position is aligned to, and which
// words of each side are in error, from a trace rewriting the reference into
// the hypothesis (lib_ter.py's trace_to_alignment on the flipped trace).
struct Alignment {
  std::vector<long> hyp_of_ref;  // [n_ref]; -1 before the first hypothesis word
  std::vector<int> ref_error;    // [n_ref]
  std::vector<int> hyp_error;    // [n_hyp]
};

Alignment align_from_trace(const std::string& hyp_to_ref_trace) {
  Alignment alignment;
  long pos_hyp = -1;
  for (char op : hyp_to_ref_trace) {
    // Flipped: the distance's insertions (reference words) become deletions.
    if (op == kMatch || op == kSubstitute) {
      ++pos_hyp;
      alignment.hyp_of_ref.push_back(pos_hyp);
      const int error = op == kSubstitute ? 1 : 0;
      alignment.hyp_error.push_back(error);
      alignment.ref_error.push_back(error);
    } else if (op == kDelete) {  // flipped to an insertion: a hypothesis word
      ++pos_hyp;
      alignment.hyp_error.push_back(1);
    } else {  // kInsert, flipped to a deletion: a reference word
      alignment.hyp_of_ref.push_back(pos_hyp);
      alignment.ref_error.push_back(1);
    }
  }
  return alignment;
}

// `words` with the block [start, start + length) moved before position
// `target` (lib_ter.py's _perform_shift, all three cases).
std::vector<int> perform_shift(std::span<const int> words, std::size_t start, std::size_t length, std::size_t target) {
  std::vector<int> out;
  out.reserve(words.size());
  const auto append = [&](std::size_t from, std::size_t to) {
    out.insert(out.end(), words.begin() + static_cast<long>(from), words.begin() + static_cast<long>(to));
  };
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, words.size());
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, words.size());
  } else {
    append(0, start);
    append(start + length, length + target);
    append(start, start + length);
    append(length + target, words.size());
  }
  return out;
}

struct ShiftResult {
  std::int64_t gain = 0;
  std::vector<int> words;
};

// The best shift of one round (lib_ter.py's _shift); `checked` counts the
// candidates evaluated so far in this segment.
ShiftResult best_shift(std::span<const int> hyp, std::span<const int> ref, int& checked) {
  const EditDistance before = beam_edit_distance(hyp, ref);
  const Alignment alignment = align_from_trace(before.trace);
  struct Candidate {
    std::int64_t gain;
    std::size_t length;
    long neg_start;
    long neg_target;
    std::vector<int> words;
  };
  std::optional<Candidate> best;
  const std::size_t n_hyp = hyp.size(), n_ref = ref.size();
  const auto error_in = [](const std::vector<int>& errors, std::size_t start, std::size_t length) {
    for (std::size_t k = start; k < start + length && k < errors.size(); ++k)
      if (errors[k]) return true;
    return false;
  };
  for (std::size_t start_h = 0; start_h < n_hyp; ++start_h) {
    for (std::size_t start_r = 0; start_r < n_ref; ++start_r) {
      if (std::labs(static_cast<long>(start_r) - static_cast<long>(start_h)) > kMaxShiftDistance) continue;
      std::size_t length = 0;
      while (hyp[start_h + length] == ref[start_r + length] && length < kMaxShiftSize) {
        ++length;
        // Each matching block [start_h, +length) is one candidate move.
        const bool consumed = start_h + length == n_hyp || start_r + length == n_ref;
        const long aligned = alignment.hyp_of_ref[start_r];
        const bool wanted = error_in(alignment.hyp_error, start_h, length) &&
                            error_in(alignment.ref_error, start_r, length) &&
                            !(static_cast<long>(start_h) <= aligned && aligned < static_cast<long>(start_h + length));
        if (wanted) {
          long previous = -1;
          for (long offset = -1; offset < static_cast<long>(length); ++offset) {
            const long r = static_cast<long>(start_r) + offset;
            const long target = r == -1 ? 0 : alignment.hyp_of_ref[static_cast<std::size_t>(r)] + 1;
            if (target == previous) continue;
            previous = target;
            std::vector<int> shifted = perform_shift(hyp, start_h, length, static_cast<std::size_t>(target));
            Candidate candidate{before.cost - beam_edit_distance(shifted, ref).cost, length,
                                -static_cast<long>(start_h), -target, std::move(shifted)};
            ++checked;
            const auto key = [](const Candidate& c) { return std::tie(c.gain, c.length, c.neg_start, c.neg_target); };
            if (!best || key(candidate) > key(*best)) best = std::move(candidate);
          }
          if (checked >= kMaxShiftCandidates) return best ? ShiftResult{best->gain, best->words} : ShiftResult{};
        }
        if (consumed) break;
      }
    }
  }
  if (!best) return {0, std::vector<int>(hyp.begin(), hyp.end())};
  return {best->gain, std::move(best->words)};
}

}  // namespace

std::int64_t translation_edits(std::span<const int> hypothesis, std::span<const int> reference) {
  if (reference.empty()) return static_cast<std::int64_t>(hypothesis.size());
  std::vector<int> words(hypothesis.begin(), hypothesis.end());
  std::int64_t shifts = 0;
  int checked = 0;
  while (true) {
    ShiftResult shift = best_shift(words, reference, checked);
    if (checked >= kMaxShiftCandidates || shift.gain <= 0) break;
    ++shifts;
    words = std::move(shift.words);
  }
  return shifts + beam_edit_distance(words, reference).cost;
}

void TerStats::add(const TerStats& other) {
  edits += other.edits;
  ref_length += other.ref_length;
}

Ter::Ter(TerOptions options) : options_(options) {}

std::string Ter::tokenize(std::string_view segment) const {
  const std::string_view stripped = python_rstrip(segment);
  std::string text = options_.case_sensitive ? std::string(stripped) : python_lower(stripped);
  if (options_.no_punct) {
    std::erase_if(text, [](char c) {
      return c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' || c == '(' || c == ')';
    });
  }
  std::string out;
  for (std::string_view word : python_split(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

TerStats Ter::segment_stats(std::string_view hypothesis, std::span<const std::string> references) const {
  std::unordered_map<std::string_view, int> ids;
  const auto to_ids = [&ids](std::string_view text) {
    std::vector<int> words;
    for (std::string_view word : python_split(text))
      words.push_back(ids.emplace(word, static_cast<int>(ids.size())).first->second);
    return words;
  };
  const std::string hyp_text = tokenize(hypothesis);
  const std::vector<int> hyp = to_ids(hyp_text);

  std::vector<std::string> ref_texts;
  for (const std::string_view reference : segment_references(references)) ref_texts.push_back(tokenize(reference));

  std::int64_t best = kInfinity;
  std::int64_t total_length = 0;
  for (const std::string& ref_text : ref_texts) {
    const std::vector<int> ref = to_ids(ref_text);
    best = std::min(best, translation_edits(hyp, ref));
    total_length += static_cast<std::int64_t>(ref.size());
  }
  return {static_cast<double>(best), static_cast<double>(total_length) / static_cast<double>(ref_texts.size())};
}

double Ter::score(const TerStats& stats) {
  if (stats.ref_length > 0) return 100 * (stats.edits / stats.ref_length);
  return stats.edits > 0 ? 100.0 : 0.0;
}

double Ter::corpus_score(std::span<const std::string> hypotheses,
                         std::span<const std::vector<std::string>> references) const {
  require(!hypotheses.empty(), "there are no hypotheses to score");
  require(!references.empty(), "TER needs at least one reference stream");
  TerStats corpus;
  for_each_segment(hypotheses, references, [&](std::string_view hypothesis, std::span<const std::string> refs) {
    corpus.add(segment_stats(hypothesis, refs));
  });
  return score(corpus);
}

std::string Ter::signature(ReferenceCount nrefs) const {
  std::string text = "nrefs:";
  text.append(nrefs < 0 ? std::string("var") : std::to_string(nrefs));
  text.append("|case:").append(options_.case_sensitive ? "mixed" : "lc");
  text.append("|tok:tercom|norm:no");
  text.append("|punct:").append(options_.no_punct ? "no" : "yes");
  text.append("|asian:no|version:").append(signature_version());
  return text;
}

}  // namespace attn::eval
