#include "attn/eval/segment_file.h"

#include <charconv>
#include <cmath>

#include "attn/core/error.h"

namespace attn::eval {

namespace {

constexpr std::string_view kMagic = "#attn-segments 1";
constexpr std::string_view kMetric = "#metric ";

// The shortest text that reads back as the same double.
void append_number(std::string& out, double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

// Splits on `separator`, keeping empty fields.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

const SegmentFile::Metric* SegmentFile::find(std::string_view name) const {
  for (const Metric& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::string format_segment_file(const SegmentFile& file) {
  std::string out(kMagic);
  out += '\n';
  for (const SegmentFile::Metric& m : file.metrics) {
    require(m.stats.segments() == file.segments() && m.stats.fields > 0,
            "segment statistics of " + m.name + " do not have one row per segment");
    out += std::string(kMetric) + m.name + " " + std::to_string(m.stats.fields) + " " + m.signature + "\n";
  }
  for (std::size_t s = 0; s < file.segments(); ++s) {
    out += std::to_string(file.reference_words[s]);
    for (const SegmentFile::Metric& m : file.metrics) {
      const std::span<const double> row = m.stats.row(s);
      for (std::size_t f = 0; f < row.size(); ++f) {
        out += f == 0 ? '\t' : ' ';
        append_number(out, row[f]);
      }
    }
    out += '\n';
  }
  return out;
}

SegmentFile parse_segment_file(std::string_view text, const std::string& origin) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  const auto fail = [&](std::size_t line, const std::string& what) {
    throw Error(origin + ":" + std::to_string(line + 1) + ": " + what +
                "; write it again with attn score --segments (docs/score.md)");
  };
  if (lines.empty() || lines[0] != kMagic)
    fail(0, "not a segment statistics file (its first line must be '" + std::string(kMagic) + "')");
  SegmentFile file;
  std::size_t line = 1;
  for (; line < lines.size() && lines[line].starts_with(kMetric); ++line) {
    const std::vector<std::string_view> parts = split(lines[line].substr(kMetric.size()), ' ');
    std::size_t fields = 0;
    const std::string_view count = parts.size() == 3 ? parts[1] : std::string_view();
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), fields);
    if (parts.size() != 3 || parts[0].empty() || ec != std::errc() || end != count.data() + count.size() ||
        fields == 0 || fields > 1000)
      fail(line, "a #metric line must be '#metric NAME FIELDS SIGNATURE'");
    if (file.find(parts[0])) fail(line, "metric " + std::string(parts[0]) + " is named twice");
    file.metrics.push_back({std::string(parts[0]), std::string(parts[2]), SegmentStats{fields, {}}});
  }
  if (file.metrics.empty()) fail(line, "no #metric line");
  std::vector<double> row;
  for (; line < lines.size(); ++line) {
    const std::vector<std::string_view> columns = split(lines[line], '\t');
    if (columns.size() != file.metrics.size() + 1)
      fail(line, "expected the reference's words and " + std::to_string(file.metrics.size()) +
                     " metric rows separated by tabs, found " + std::to_string(columns.size()) + " columns");
    std::int64_t words = 0;
    const auto [end, ec] = std::from_chars(columns[0].data(), columns[0].data() + columns[0].size(), words);
    if (ec != std::errc() || end != columns[0].data() + columns[0].size() || words < 0)
      fail(line, "the reference's word count '" + std::string(columns[0]) + "' is not a whole number");
    file.reference_words.push_back(words);
    for (std::size_t m = 0; m < file.metrics.size(); ++m) {
      SegmentFile::Metric& metric = file.metrics[m];
      const std::vector<std::string_view> values = split(columns[m + 1], ' ');
      if (values.size() != metric.stats.fields)
        fail(line, metric.name + " needs " + std::to_string(metric.stats.fields) + " numbers, found " +
                       std::to_string(values.size()));
      row.clear();
      for (std::string_view v : values) {
        double value = 0.0;
        const auto [vend, vec] = std::from_chars(v.data(), v.data() + v.size(), value);
        if (vec != std::errc() || vend != v.data() + v.size() || !std::isfinite(value) || value < 0.0)
          fail(line, metric.name + " value '" + std::string(v) + "' is not a number of at least 0");
        row.push_back(value);
      }
      metric.stats.append(row);
    }
  }
  if (file.segments() == 0) fail(line, "no segment lines");
  return file;
}

}  // namespace attn::eval
