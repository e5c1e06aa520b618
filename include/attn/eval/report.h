// Printing scores the way sacreBLEU 2.x's command line does: the text line
// "BLEU|<signature> = 48.5 82.4/59.5/43.5/32.2 (BP = ...)" (several lines
// right-aligned on their '='), or JSON objects with the name, the score, the
// signature, the verbose part and each signature field.
#pragma once
#include <span>
#include <string>

namespace attn::eval {

struct MetricResult {
  std::string name;       // "BLEU", "chrF2"
  double score = 0.0;     // 0..100
  std::string signature;  // "nrefs:1|case:mixed|..."
  std::string verbose;    // BLEU's precisions and lengths; empty for chrF
};

// sacreBLEU's text format, `width` decimals, one line per metric (each
// ending in '\n').
std::string format_text(std::span<const MetricResult> results, int width);

// A JSON list with one object per metric, laid out as sacreBLEU's
// json.dumps(indent=1). Unlike sacreBLEU, "score" keeps full double precision
// (shortest text that reads back to the same double), and a single metric
// is still a one-element list.
std::string format_json(std::span<const MetricResult> results);

// Only the scores, `width` decimals, one per line (sacreBLEU's --score-only).
std::string format_scores_only(std::span<const MetricResult> results, int width);

}  // namespace attn::eval
