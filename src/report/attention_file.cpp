#include "attn/report/attention_file.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/core/error.h"
#include "attn/decode/attention_stats.h"
#include "attn/report/run_summary.h"

namespace attn::report {

namespace {

using nlohmann::json;

AttentionFile::Layer read_layer(const json& layer) {
  AttentionFile::Layer out;
  const json& all = layer.at("all_heads");
  out.rows = all.at("rows").get<std::int64_t>();
  for (const char* name : decode::kStatisticNames) {
    const json& v = all.at(name);
    out.means.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
  }
  return out;
}

}  // namespace

std::size_t statistic_index(const std::string& name) {
  const auto it = std::find(decode::kStatisticNames.begin(), decode::kStatisticNames.end(), name);
  if (it == decode::kStatisticNames.end()) throw std::logic_error("no attention statistic named " + name);
  return static_cast<std::size_t>(it - decode::kStatisticNames.begin());
}

AttentionFile parse_attention_file(std::string_view text, const std::string& name) {
  const auto fail = [&](const std::string& what) -> AttentionFile {
    throw Error(name + ": " + what + " (attn attn-stats -o writes it; docs/attention-stats.md)");
  };
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail("not JSON");
  if (doc.value("format", "") != decode::kStatsFormat) return fail("not an attn-attention-stats document");
  AttentionFile file;
  try {
    file.version = doc.at("version").get<int>();
    if (file.version < 1 || file.version > decode::kStatsFormatVersion)
      return fail("version " + std::to_string(file.version) + " of attn-attention-stats; this attn reads 1 to " +
                  std::to_string(decode::kStatsFormatVersion));
    file.sentences = doc.at("sentences").get<std::int64_t>();
    for (const char* component : {"encoder", "decoder", "cross"}) {
      std::vector<AttentionFile::Layer>& layers = file.components[component];
      for (const json& layer : doc.at("components").at(component).at("layers")) layers.push_back(read_layer(layer));
    }
    const auto per = doc.find("per_sentence");
    if (per == doc.end()) return file;
    const std::size_t lines = per->at("lines").get<std::size_t>();
    if (static_cast<std::int64_t>(lines) != file.sentences)
      return fail("per_sentence has " + std::to_string(lines) + " lines but the document " +
                  std::to_string(file.sentences) + " sentences");
    for (auto& [component, layers] : file.components) {
      const json& entries = per->at(component);
      if (entries.size() != layers.size()) return fail("per_sentence." + component + " has another number of layers");
      for (std::size_t l = 0; l < layers.size(); ++l) {
        AttentionFile::Layer& layer = layers[l];
        layer.line_rows = entries[l].at("rows").get<std::vector<double>>();
        for (const char* statistic : decode::kStatisticNames)
          layer.line_sums.push_back(entries[l].at(statistic).get<std::vector<double>>());
        bool sized = layer.line_rows.size() == lines;
        for (const std::vector<double>& sums : layer.line_sums) sized = sized && sums.size() == lines;
        if (!sized)
          return fail("per_sentence." + component + " layer " + std::to_string(l) + " has not one entry per line");
      }
    }
    file.per_sentence = true;
  } catch (const json::exception& e) {
    return fail(std::string("a field is missing or of the wrong type (") + e.what() + ")");
  }
  return file;
}

AttentionFile read_attention_file(const std::filesystem::path& path) {
  return parse_attention_file(read_text(path), path.string());
}

std::vector<std::size_t> resolve_layers(const std::string& layer, std::size_t layers) {
  std::vector<std::size_t> out;
  if (layers == 0) return out;
  if (layer == "all") {
    for (std::size_t l = 0; l < layers; ++l) out.push_back(l);
  } else if (layer == "last") {
    out.push_back(layers - 1);
  } else {
    std::size_t n = 0;
    const auto [ptr, ec] = std::from_chars(layer.data(), layer.data() + layer.size(), n);
    if (ec == std::errc() && ptr == layer.data() + layer.size() && n < layers) out.push_back(n);
  }
  return out;
}

std::optional<double> pooled_mean(const AttentionFile& file, const std::string& component,
                                  const std::vector<std::size_t>& layers, std::size_t statistic) {
  const std::vector<AttentionFile::Layer>& all = file.components.at(component);
  double rows = 0.0, sum = 0.0;
  for (std::size_t l : layers) {
    const AttentionFile::Layer& layer = all.at(l);
    if (layer.rows == 0 || !layer.means.at(statistic)) continue;
    rows += static_cast<double>(layer.rows);
    sum += static_cast<double>(layer.rows) * *layer.means[statistic];
  }
  if (rows == 0.0) return std::nullopt;
  return sum / rows;
}

eval::SegmentStats line_sums(const AttentionFile& file, const std::string& component,
                             const std::vector<std::size_t>& layers, std::size_t statistic) {
  if (!file.per_sentence) throw std::logic_error("line_sums of a file without per-sentence sums");
  eval::SegmentStats out;
  out.fields = 2;
  out.values.assign(static_cast<std::size_t>(file.sentences) * 2, 0.0);
  const std::vector<AttentionFile::Layer>& all = file.components.at(component);
  for (std::size_t l : layers)
    for (std::size_t i = 0; i < static_cast<std::size_t>(file.sentences); ++i) {
      out.values[2 * i] += all.at(l).line_rows[i];
      out.values[2 * i + 1] += all.at(l).line_sums.at(statistic)[i];
    }
  return out;
}

double ratio_of_sums(std::span<const double> summed) { return summed[0] > 0.0 ? summed[1] / summed[0] : 0.0; }

}  // namespace attn::report
