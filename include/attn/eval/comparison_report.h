// Printing what `attn score` computes beyond one corpus score: several
// systems with paired tests (sacreBLEU's table: "score (μ ± 95% CI)", p-values
// with a '*' below 0.05, then the signatures), scores per length bucket, and
// one line per segment. JSON carries every number at full precision.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attn/eval/by_length.h"
#include "attn/eval/significance.h"

namespace attn::eval {

// One metric's column: its name, its signature and one result per system
// (the baseline first when a test ran).
struct MetricColumn {
  std::string name;
  std::string signature;
  std::vector<PairedResult> results;
};

enum class PairedTest { none, bootstrap, randomization };

struct SystemTable {
  std::vector<std::string> systems;  // "Baseline: a.txt" first when paired
  std::vector<MetricColumn> columns;
  PairedTest test = PairedTest::none;
  std::size_t samples = 0;  // resamples or trials
};

std::string format_system_table_text(const SystemTable& table, int width);
// sacreBLEU's list of {"system": name, metric: {score, p_value, mean, ci}};
// plus ci_low/ci_high and the signature in each metric object.
std::string format_system_table_json(const SystemTable& table);

// One system's scores per length bucket: scores[m][b] for column m, bucket b.
struct LengthTable {
  std::vector<LengthBucket> buckets;
  std::vector<std::string> metrics;
  std::vector<std::string> signatures;
  std::vector<std::vector<std::optional<double>>> scores;
};

std::string format_length_table_text(const LengthTable& table, int width);
std::string format_length_table_json(const LengthTable& table);

// Sentence-level: one JSON object per line {"segment": 1, "BLEU": ..., ...},
// or with text one tab-separated line "1<TAB>BLEU = 8.5<TAB>chrF2 = 40.1".
std::string format_sentence_line(std::size_t segment, std::span<const std::string> metrics,
                                 std::span<const double> scores, bool json, int width);

}  // namespace attn::eval
