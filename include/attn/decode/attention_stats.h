// Statistics of the attention itself, for `attn attn-stats`
// (docs/attention-stats.md): per component (encoder, decoder, cross), layer
// and head, how concentrated each query's distribution over its keys is —
// entropy, entropy over log(keys), largest weight — and how far it reaches:
// mean distance from the query's diagonal position and the mass within ±w of
// it. Sums over query rows, so a test set of any length is measured one
// sentence's maps at a time (the maps attn attend writes, decode/maps.h).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/mechanism.h"

namespace attn::decode {

inline constexpr const char* kStatsFormat = "attn-attention-stats";
// Version 2 added the optional "per_sentence" section (--per-sentence); a
// document without it reads as version 1 did.
inline constexpr int kStatsFormatVersion = 2;

// The statistics of a row, in the order the documents list them.
inline constexpr std::array<const char*, 5> kStatisticNames = {"entropy", "normalised_entropy", "max_weight",
                                                               "distance", "mass_within"};

// One query row over its allowed keys.
struct RowStats {
  std::int64_t keys = 0;          // allowed keys
  double entropy = 0.0;           // −Σ p log p, nats
  double normalised_entropy = 0;  // entropy / log(keys); 0 when keys ≤ 1
  double max_weight = 0.0;        // the largest p
  double distance = 0.0;          // Σ p_j |j − centre|
  double mass_within = 0.0;       // Σ p_j over |j − centre| ≤ within
};

// The statistics of `row` (the weights over every key of the map) over the
// allowed keys [first, last]; weights outside are ignored (they are 0) and
// the allowed ones renormalised to sum 1 (they do, up to float rounding). A
// row with no allowed key, or no weight on them, has keys = 0 and zeros.
RowStats row_stats(std::span<const float> row, std::int64_t first, std::int64_t last, double centre,
                   std::int64_t within);

// Where query i's attention would sit on the diagonal: i in self-attention;
// in cross-attention of `rows` target positions over `keys` source positions
// the diagonal scaled by the length ratio, (i + ½)·keys/rows − ½ (i when the
// lengths are equal).
double diagonal_position(std::int64_t i, std::int64_t rows, std::int64_t keys, bool cross);

// Row statistics summed. The means are over rows with at least two allowed
// keys (`rows`): a row with one key has no choice to measure (its weight is
// 1, its entropy 0), and a row with none (a Fast-DiSA strict head's first or
// last token) has no distribution; both are only counted.
struct StatsSums {
  std::int64_t rows = 0, single_key_rows = 0, empty_rows = 0;
  double entropy = 0.0, normalised_entropy = 0.0, max_weight = 0.0, distance = 0.0, mass_within = 0.0;
  void add(const RowStats& r);
  StatsSums& operator+=(const StatsSums& other);
  // {"rows", "single_key_rows", "empty_rows", "entropy", "normalised_entropy",
  // "max_weight", "distance", "mass_within"}: the last five are means, null
  // when rows == 0.
  nlohmann::ordered_json to_json() const;
};

// Adds every row of a map [heads, rows, keys] to per_head[h], head h's keys
// given by windows[h]. cross: distances from the scaled diagonal.
void add_map(std::span<StatsSums> per_head, const float* weights, std::int64_t heads, std::int64_t rows,
             std::int64_t keys, std::span<const nn::KeyWindow> windows, bool cross, std::int64_t within);

// The document's fields before the statistics: format, version,
// attn_version, model (file, config, mixers), mode ("forced", "greedy" or
// "beam") and search (the search flags; null in forced mode).
nlohmann::json stats_header(const model::Seq2Seq& model, const std::string& model_file, bool forced,
                            const SearchOptions& search);

// The document as attn attn-stats writes it: indented one space per level,
// but each layer of "per_sentence" on one line (thousands of numbers, not a
// line each); ends with a newline.
std::string stats_document_text(const nlohmann::ordered_json& doc);

// The statistics of a model's maps over a test set.
class AttentionStats {
 public:
  AttentionStats(const model::Seq2Seq& model, std::int64_t within);
  static constexpr std::size_t kNoLine = std::numeric_limits<std::size_t>::max();

  // Keeps, besides the totals, the sums of each of `lines` input lines per
  // component and layer (heads pooled), the unit a bootstrap over sentences
  // resamples; add() and add_empty() must then name the line.
  void keep_per_sentence(std::size_t lines);
  // One sentence's maps (model::Seq2Seq::attention_maps), of input line `line`.
  void add(const model::SentenceMaps& maps, std::size_t line = kNoLine);
  // A sentence that was not run (an empty source): counted only (its line's sums stay 0).
  void add_empty(std::size_t line = kNoLine);

  // The document (docs/attention-stats.md): `header` (format, model, mode, …)
  // followed by the counts and "components", in that order, and
  // "per_sentence" when kept.
  nlohmann::ordered_json to_json(const nlohmann::json& header) const;
  // The same numbers as a plain table: a commented header, then one line per
  // component, layer and head (and "all", the layer's heads pooled).
  std::string table() const;

 private:
  struct Layer {
    std::string mechanism;
    std::vector<StatsSums> heads;
    std::vector<StatsSums> lines;  // per input line, heads pooled (keep_per_sentence)
  };
  void check_line(std::size_t line) const;
  nlohmann::ordered_json per_sentence_json() const;
  std::int64_t within_, heads_;
  std::vector<Layer> encoder_, decoder_, cross_;
  std::int64_t sentences_ = 0, empty_sources_ = 0, source_tokens_ = 0, target_tokens_ = 0;
  bool per_sentence_ = false;
  std::size_t lines_ = 0;
};

}  // namespace attn::decode
