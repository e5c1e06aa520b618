#include "attn/eval/report.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "attn/core/format.h"

namespace attn::eval {
namespace {

std::string text_line(const MetricResult& result, int width) {
  std::string line = result.name;
  if (!result.signature.empty()) line += "|" + result.signature;
  line += " = " + format_fixed(result.score, width);
  if (!result.verbose.empty()) line += " " + result.verbose;
  return line;
}

std::string json_object(const MetricResult& result) {
  nlohmann::ordered_json object;
  object["name"] = result.name;
  object["score"] = result.score;
  object["signature"] = result.signature;
  if (!result.verbose.empty()) object["verbose_score"] = result.verbose;
  std::size_t start = 0;
  while (start < result.signature.size()) {
    std::size_t end = result.signature.find('|', start);
    if (end == std::string::npos) end = result.signature.size();
    const std::string field = result.signature.substr(start, end - start);
    const std::size_t colon = field.find(':');
    if (colon != std::string::npos) object[field.substr(0, colon)] = field.substr(colon + 1);
    start = end + 1;
  }
  return object.dump(1);
}

}  // namespace

std::string format_text(std::span<const MetricResult> results, int width) {
  std::vector<std::string> lines;
  for (const MetricResult& result : results) lines.push_back(text_line(result, width));
  // Right-align the part before " = " so the '=' signs line up.
  std::size_t name_width = 0;
  for (const std::string& line : lines) name_width = std::max(name_width, line.find(" = "));
  std::string out;
  for (const std::string& line : lines) {
    out.append(name_width - line.find(" = "), ' ');
    out += line + "\n";
  }
  return out;
}

std::string format_json(std::span<const MetricResult> results) {
  std::string out = "[\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out += ",\n";
    out += json_object(results[i]);
  }
  out += "\n]\n";
  return out;
}

std::string format_scores_only(std::span<const MetricResult> results, int width) {
  std::string out;
  for (const MetricResult& result : results) out += format_fixed(result.score, width) + "\n";
  return out;
}

}  // namespace attn::eval
