// BLEU, chrF and TER seen the same way: one row of sufficient statistics per
// segment (in sacreBLEU's order), and a corpus score from summed rows. This
// is what the paired tests, the length buckets and sentence-level scoring
// work on, and what another program needs to compare systems.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/bleu.h"
#include "attn/eval/chrf.h"
#include "attn/eval/significance.h"
#include "attn/eval/ter.h"

namespace attn::eval {

struct CorpusMetric {
  std::string name;  // "BLEU", "chrF2", "chrF2++", "TER"
  // Row of one hypothesis against its references (raw text).
  std::function<std::vector<double>(std::string_view, std::span<const std::string>)> segment_row;
  ScoreFromStats score;
  // BLEU's "82.4/59.5/... (BP = ...)" for summed rows; empty for the others.
  std::function<std::string(std::span<const double>)> verbose;
  std::function<std::string(ReferenceCount)> signature;

  // The rows of a corpus; references[k][i] is the k-th reference of line i.
  SegmentStats corpus_stats(std::span<const std::string> hypotheses,
                            std::span<const std::vector<std::string>> references) const;
};

// BLEU rows: [hyp_len, ref_len, correct_1..N, total_1..N].
CorpusMetric bleu_metric(const BleuOptions& options);
// chrF rows: [hyp, ref, match] per character order, then per word order.
CorpusMetric chrf_metric(const ChrfOptions& options);
// TER rows: [edits, average reference length].
CorpusMetric ter_metric(const TerOptions& options);

}  // namespace attn::eval
