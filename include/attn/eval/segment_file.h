// A translation's per-segment statistics, kept in its place: for each line,
// every metric's row of sufficient statistics (corpus_metric.h) and the word
// count of its reference. Summed rows give the corpus scores, rows paired
// line by line give the paired tests between systems, and the word counts
// give the scores by reference length — all without the translation or the
// reference, so an archive of runs on a corpus that must not be shared
// keeps everything a comparison needs and none of the corpus's text.
//
// The file (attn score --segments FILE; attn report reads RUN/segments/):
//
//   #attn-segments 1
//   #metric BLEU 10 nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0
//   #metric chrF2 18 nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.0
//   12<TAB>13 12 10 7 4 2 12 11 10 9<TAB>50 51 42 ...
//
// one line per segment: the reference's words (whitespace split), then each
// metric's row in the order of the #metric lines (name, fields, signature).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/significance.h"

namespace attn::eval {

struct SegmentFile {
  struct Metric {
    std::string name;       // "BLEU", "chrF2", ...
    std::string signature;  // sacreBLEU's signature of the options it was computed with
    SegmentStats stats;     // [segments * fields]
  };
  std::vector<std::int64_t> reference_words;  // [segments]
  std::vector<Metric> metrics;

  std::size_t segments() const { return reference_words.size(); }
  // The metric of that name, or nullptr.
  const Metric* find(std::string_view name) const;
};

// The file's text. Every metric must have a row per segment.
std::string format_segment_file(const SegmentFile& file);

// Parses a file's text; `origin` names it in errors (one line: where, what
// is wrong). Throws Error on any malformed line.
SegmentFile parse_segment_file(std::string_view text, const std::string& origin);

}  // namespace attn::eval
