#include "attn/eval/comparison_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attn/core/format.h"

namespace attn::eval {
namespace {

// Display width of UTF-8 text in code points (the table's "μ" and "±").
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(),
                                                [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t have = display_width(text);
  return std::string(width > have ? width - have : 0, ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t have = display_width(text);
  return text + std::string(width > have ? width - have : 0, ' ');
}

// Rows of cells as aligned columns: the first right-aligned, the rest left.
std::string render(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += " | ";
      line += c == 0 ? pad_left(row[c], widths[c]) : pad_right(row[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// sacreBLEU's _format_score_lines for one cell.
std::string score_cell(const PairedResult& result, int width) {
  std::string cell = format_fixed(result.score, width);
  if (result.ci)
    cell += " (" + format_fixed(result.ci->mean, width) + " ± " + format_fixed(result.ci->half_width, width) + ")";
  return cell;
}

std::string p_cell(const PairedResult& result) {
  return "(p = " + format_fixed(result.p_value, 4) + ")" + (result.p_value <= 0.05 ? "*" : "");
}

nlohmann::ordered_json ci_json(const std::optional<ConfidenceInterval>& ci) {
  if (!ci) return nullptr;
  return {{"mean", ci->mean}, {"ci", ci->half_width}, {"low", ci->low}, {"high", ci->high}};
}

}  // namespace

std::string format_system_table_text(const SystemTable& table, int width) {
  const bool paired = table.test != PairedTest::none;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"System"};
  for (const MetricColumn& column : table.columns)
    header.push_back(column.name + (table.test == PairedTest::bootstrap ? " (μ ± 95% CI)" : ""));
  rows.push_back(header);
  for (std::size_t s = 0; s < table.systems.size(); ++s) {
    std::vector<std::string> row{table.systems[s]}, p_row{""};
    for (const MetricColumn& column : table.columns) {
      row.push_back(score_cell(column.results[s], width));
      p_row.push_back(paired && s > 0 ? p_cell(column.results[s]) : "");
    }
    rows.push_back(row);
    if (paired && s > 0) rows.push_back(p_row);
  }
  std::string out = render(rows) + "\n";
  if (paired) {
    const bool bootstrap = table.test == PairedTest::bootstrap;
    const std::string title = std::string("Paired ") +
                              (bootstrap ? "bootstrap resampling" : "approximate randomization") + " test with " +
                              std::to_string(table.samples) + (bootstrap ? " resampling trials" : " trials");
    out += std::string(title.size(), '-') + "\n" + title + "\n" + std::string(title.size(), '-') + "\n";
    out += " - Each system is pairwise compared to " + table.systems.front() + ".\n";
    out += bootstrap ? "   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.\n"
                     : "   Actual system score is provided for each metric.\n";
    out += " - p is roughly the probability of an absolute score difference this large or larger\n"
           "   if the system and the baseline came from the same process; p-values < 0.05 are marked with \"*\".\n"
           " - Significance says the systems differ, not which one is better.\n\n";
  }
  out += "-----------------\nMetric signatures\n-----------------\n";
  for (const MetricColumn& column : table.columns)
    out += " - " + pad_right(column.name, 10) + " " + column.signature + "\n";
  return out;
}

std::string format_system_table_json(const SystemTable& table) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t s = 0; s < table.systems.size(); ++s) {
    nlohmann::ordered_json entry;
    entry["system"] = table.systems[s];
    for (const MetricColumn& column : table.columns) {
      const PairedResult& result = column.results[s];
      nlohmann::ordered_json value;
      value["score"] = result.score;
      value["p_value"] = table.test != PairedTest::none && s > 0 ? nlohmann::ordered_json(result.p_value) : nullptr;
      value["mean"] = result.ci ? nlohmann::ordered_json(result.ci->mean) : nullptr;
      value["ci"] = result.ci ? nlohmann::ordered_json(result.ci->half_width) : nullptr;
      value["ci_low"] = result.ci ? nlohmann::ordered_json(result.ci->low) : nullptr;
      value["ci_high"] = result.ci ? nlohmann::ordered_json(result.ci->high) : nullptr;
      if (result.diff_ci) value["difference"] = ci_json(result.diff_ci);
      value["signature"] = column.signature;
      entry[column.name] = value;
    }
    list.push_back(entry);
  }
  return list.dump(4) + "\n";
}

std::string format_length_table_text(const LengthTable& table, int width) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"ref words", "segments", "words"};
  header.insert(header.end(), table.metrics.begin(), table.metrics.end());
  rows.push_back(header);
  for (std::size_t b = 0; b < table.buckets.size(); ++b) {
    const LengthBucket& bucket = table.buckets[b];
    std::vector<std::string> row{bucket.label, std::to_string(bucket.segments.size()), std::to_string(bucket.words)};
    for (const auto& scores : table.scores) row.push_back(scores[b] ? format_fixed(*scores[b], width) : "-");
    rows.push_back(row);
  }
  std::string out = render(rows) + "\n";
  for (std::size_t m = 0; m < table.metrics.size(); ++m)
    out += " - " + pad_right(table.metrics[m], 10) + " " + table.signatures[m] + "\n";
  return out;
}

std::string format_length_table_json(const LengthTable& table) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t b = 0; b < table.buckets.size(); ++b) {
    const LengthBucket& bucket = table.buckets[b];
    nlohmann::ordered_json entry;
    entry["bucket"] = bucket.label;
    entry["min_words"] = bucket.min_words;
    entry["max_words"] = bucket.max_words < 0 ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(bucket.max_words);
    entry["segments"] = bucket.segments.size();
    entry["words"] = bucket.words;
    for (std::size_t m = 0; m < table.metrics.size(); ++m)
      entry[table.metrics[m]] = table.scores[m][b] ? nlohmann::ordered_json(*table.scores[m][b]) : nullptr;
    list.push_back(entry);
  }
  nlohmann::ordered_json signatures;
  for (std::size_t m = 0; m < table.metrics.size(); ++m) signatures[table.metrics[m]] = table.signatures[m];
  nlohmann::ordered_json out{{"by_length", list}, {"signatures", signatures}};
  return out.dump(1) + "\n";
}

std::string format_sentence_line(std::size_t segment, std::span<const std::string> metrics,
                                 std::span<const double> scores, bool json, int width) {
  if (json) {
    nlohmann::ordered_json line;
    line["segment"] = segment;
    for (std::size_t m = 0; m < metrics.size(); ++m) line[metrics[m]] = scores[m];
    return line.dump() + "\n";
  }
  std::string line = std::to_string(segment);
  for (std::size_t m = 0; m < metrics.size(); ++m) line += "\t" + metrics[m] + " = " + format_fixed(scores[m], width);
  return line + "\n";
}

}  // namespace attn::eval
