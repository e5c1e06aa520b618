// What attn report reads of an attn attn-stats document
// (docs/attention-stats.md), the runs' stats/<set>.<model>.json: per
// component and layer the heads' pooled rows and means, and — when it was
// written with --per-sentence — each input line's rows and sums, from which
// the verdicts' bootstrap draws sentences. A statistic of several layers
// ("all") pools their rows: the mean over every row of every layer.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/eval/significance.h"

namespace attn::report {

struct AttentionFile {
  struct Layer {
    std::int64_t rows = 0;                       // all_heads.rows
    std::vector<std::optional<double>> means;    // [statistic], decode::kStatisticNames' order; none without rows
    std::vector<double> line_rows;               // per_sentence: [lines]
    std::vector<std::vector<double>> line_sums;  // per_sentence: [statistic][lines]
  };
  int version = 0;
  std::int64_t sentences = 0;
  bool per_sentence = false;                             // every layer has line_rows and line_sums
  std::map<std::string, std::vector<Layer>> components;  // "encoder", "decoder", "cross"
};

// Throws Error "NAME: what is wrong" for text that is not an attn-attention-stats
// document of version 1 or 2 with every component, or whose per-sentence
// arrays do not have one entry per line.
AttentionFile parse_attention_file(std::string_view text, const std::string& name);
AttentionFile read_attention_file(const std::filesystem::path& path);

// The layers a claim's layer names of a component with `layers` layers: {n},
// every layer for "all", the last for "last"; empty when n is past the last.
std::vector<std::size_t> resolve_layers(const std::string& layer, std::size_t layers);

// The pooled mean of `statistic` over `layers` of `component`: Σ rows·mean / Σ rows;
// none when those layers have no rows.
std::optional<double> pooled_mean(const AttentionFile& file, const std::string& component,
                                  const std::vector<std::size_t>& layers, std::size_t statistic);

// Per input line, the rows and the sum of `statistic` over `layers`: [lines * 2]
// rows (rows, sum), the rows a bootstrap over sentences resamples (a resample's
// statistic is Σ sum / Σ rows, ratio_of_sums). Needs file.per_sentence.
eval::SegmentStats line_sums(const AttentionFile& file, const std::string& component,
                             const std::vector<std::size_t>& layers, std::size_t statistic);

// Σ sum / Σ rows of summed (rows, sum); 0 without rows.
double ratio_of_sums(std::span<const double> summed);

// The index of a statistic in decode::kStatisticNames; throws std::logic_error for another name.
std::size_t statistic_index(const std::string& name);

}  // namespace attn::report
