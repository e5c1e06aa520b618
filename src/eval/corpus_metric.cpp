#include "attn/eval/corpus_metric.h"

#include <memory>

#include "attn/core/error.h"
#include "attn/eval/segments.h"

namespace attn::eval {

SegmentStats CorpusMetric::corpus_stats(std::span<const std::string> hypotheses,
                                        std::span<const std::vector<std::string>> references) const {
  SegmentStats stats;
  for_each_segment(hypotheses, references, [&](std::string_view hypothesis, std::span<const std::string> refs) {
    stats.append(segment_row(hypothesis, refs));
  });
  return stats;
}

namespace {

BleuScore bleu_from_row(std::span<const double> row, const BleuOptions& options) {
  const auto orders = static_cast<std::size_t>(options.max_ngram_order);
  require(row.size() == 2 + 2 * orders, "BLEU statistics must have 2 + 2 * order numbers");
  return compute_bleu(std::vector<double>(row.begin() + 2, row.begin() + 2 + static_cast<long>(orders)),
                      std::vector<double>(row.begin() + 2 + static_cast<long>(orders), row.end()),
                      static_cast<std::int64_t>(row[0]), static_cast<std::int64_t>(row[1]), options);
}

}  // namespace

CorpusMetric bleu_metric(const BleuOptions& options) {
  const auto bleu = std::make_shared<const Bleu>(options);
  CorpusMetric metric;
  metric.name = "BLEU";
  metric.segment_row = [bleu](std::string_view hyp, std::span<const std::string> refs) {
    const BleuStats stats = bleu->segment_stats(hyp, refs);
    std::vector<double> row{static_cast<double>(stats.hyp_len), static_cast<double>(stats.ref_len)};
    row.insert(row.end(), stats.correct.begin(), stats.correct.end());
    row.insert(row.end(), stats.total.begin(), stats.total.end());
    return row;
  };
  metric.score = [options](std::span<const double> row) { return bleu_from_row(row, options).score; };
  metric.verbose = [options](std::span<const double> row) { return bleu_from_row(row, options).verbose(); };
  metric.signature = [bleu](ReferenceCount nrefs) { return bleu->signature(nrefs); };
  return metric;
}

CorpusMetric chrf_metric(const ChrfOptions& options) {
  const auto chrf = std::make_shared<const Chrf>(options);
  CorpusMetric metric;
  metric.name = chrf->name();
  metric.segment_row = [chrf](std::string_view hyp, std::span<const std::string> refs) {
    const ChrfStats stats = chrf->segment_stats(hyp, refs);
    return std::vector<double>(stats.counts.begin(), stats.counts.end());
  };
  metric.score = [chrf](std::span<const double> row) {
    ChrfStats stats;
    for (double count : row) stats.counts.push_back(static_cast<std::int64_t>(count));
    return chrf->f_score(stats);
  };
  metric.signature = [chrf](ReferenceCount nrefs) { return chrf->signature(nrefs); };
  return metric;
}

CorpusMetric ter_metric(const TerOptions& options) {
  const auto ter = std::make_shared<const Ter>(options);
  CorpusMetric metric;
  metric.name = "TER";
  metric.segment_row = [ter](std::string_view hyp, std::span<const std::string> refs) {
    const TerStats stats = ter->segment_stats(hyp, refs);
    return std::vector<double>{stats.edits, stats.ref_length};
  };
  metric.score = [](std::span<const double> row) {
    require(row.size() == 2, "TER statistics are edits and reference length");
    return Ter::score({row[0], row[1]});
  };
  metric.signature = [ter](ReferenceCount nrefs) { return ter->signature(nrefs); };
  return metric;
}

}  // namespace attn::eval
