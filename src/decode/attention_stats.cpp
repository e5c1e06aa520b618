#include "attn/decode/attention_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "attn/decode/document_header.h"

namespace attn::decode {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A mean as JSON: 6 decimals (enough for any comparison; the sums are over
// thousands of rows), null without rows.
ordered_json mean_json(double sum, std::int64_t rows) {
  if (rows == 0) return nullptr;
  return std::round(sum / static_cast<double>(rows) * 1e6) / 1e6;
}

}  // namespace

RowStats row_stats(std::span<const float> row, std::int64_t first, std::int64_t last, double centre,
                   std::int64_t within) {
  RowStats r;
  first = std::max<std::int64_t>(first, 0);
  last = std::min<std::int64_t>(last, static_cast<std::int64_t>(row.size()) - 1);
  if (first > last) return r;
  double total = 0.0;
  for (std::int64_t j = first; j <= last; ++j) total += std::max(0.0f, row[static_cast<std::size_t>(j)]);
  if (!(total > 0.0)) return r;
  r.keys = last - first + 1;
  for (std::int64_t j = first; j <= last; ++j) {
    const double p = std::max(0.0f, row[static_cast<std::size_t>(j)]) / total;
    if (p > 0.0) r.entropy -= p * std::log(p);
    r.max_weight = std::max(r.max_weight, p);
    const double d = std::abs(static_cast<double>(j) - centre);
    r.distance += p * d;
    // A hair of slack so that a scaled diagonal landing on .5 counts the keys at exactly ±within.
    if (d <= static_cast<double>(within) + 1e-9) r.mass_within += p;
  }
  r.entropy = std::max(0.0, r.entropy);
  r.normalised_entropy = r.keys > 1 ? r.entropy / std::log(static_cast<double>(r.keys)) : 0.0;
  return r;
}

double diagonal_position(std::int64_t i, std::int64_t rows, std::int64_t keys, bool cross) {
  if (!cross || rows <= 0) return static_cast<double>(i);
  return (static_cast<double>(i) + 0.5) * static_cast<double>(keys) / static_cast<double>(rows) - 0.5;
}

void StatsSums::add(const RowStats& r) {
  if (r.keys == 0) {
    ++empty_rows;
    return;
  }
  if (r.keys == 1) {
    ++single_key_rows;
    return;
  }
  ++rows;
  entropy += r.entropy;
  normalised_entropy += r.normalised_entropy;
  max_weight += r.max_weight;
  distance += r.distance;
  mass_within += r.mass_within;
}

StatsSums& StatsSums::operator+=(const StatsSums& o) {
  rows += o.rows;
  single_key_rows += o.single_key_rows;
  empty_rows += o.empty_rows;
  entropy += o.entropy;
  normalised_entropy += o.normalised_entropy;
  max_weight += o.max_weight;
  distance += o.distance;
  mass_within += o.mass_within;
  return *this;
}

ordered_json StatsSums::to_json() const {
  return {{"rows", rows},
          {"single_key_rows", single_key_rows},
          {"empty_rows", empty_rows},
          {"entropy", mean_json(entropy, rows)},
          {"normalised_entropy", mean_json(normalised_entropy, rows)},
          {"max_weight", mean_json(max_weight, rows)},
          {"distance", mean_json(distance, rows)},
          {"mass_within", mean_json(mass_within, rows)}};
}

void add_map(std::span<StatsSums> per_head, const float* weights, std::int64_t heads, std::int64_t rows,
             std::int64_t keys, std::span<const nn::KeyWindow> windows, bool cross, std::int64_t within) {
  if (static_cast<std::int64_t>(per_head.size()) != heads || static_cast<std::int64_t>(windows.size()) != heads)
    throw std::logic_error("add_map: one sum and one key window per head");
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < rows; ++i) {
      const nn::KeyWindow& w = windows[static_cast<std::size_t>(h)];
      const std::span<const float> row(weights + (h * rows + i) * keys, static_cast<std::size_t>(keys));
      per_head[static_cast<std::size_t>(h)].add(row_stats(row, w.first(i), w.last(i, keys),
                                                          diagonal_position(i, rows, keys, cross), within));
    }
}

json stats_header(const model::Seq2Seq& model, const std::string& model_file, bool forced,
                  const SearchOptions& search) {
  json searched = nullptr;
  if (!forced)
    searched = {{"beam", search.beam},
                {"lenpen", search.lenpen},
                {"max_len_a", search.max_len_a},
                {"max_len_b", search.max_len_b}};
  json header = document_header(kStatsFormat, kStatsFormatVersion, model, model_file, forced, search);
  header["search"] = searched;
  return header;
}

AttentionStats::AttentionStats(const model::Seq2Seq& model, std::int64_t within)
    : within_(within), heads_(model.config().heads) {
  const auto layers = [&](const std::vector<std::string>& kinds) {
    std::vector<Layer> out;
    for (const std::string& kind : kinds)
      out.push_back({kind, std::vector<StatsSums>(static_cast<std::size_t>(heads_)), {}});
    return out;
  };
  encoder_ = layers(model.encoder_mixer_kinds());
  decoder_ = layers(model.decoder_mixer_kinds());
  cross_ = layers(std::vector<std::string>(decoder_.size(), "mha"));  // cross-attention is always multi-head attention
}

void AttentionStats::keep_per_sentence(std::size_t lines) {
  per_sentence_ = true;
  lines_ = lines;
  for (std::vector<Layer>* layers : {&encoder_, &decoder_, &cross_})
    for (Layer& layer : *layers) layer.lines.assign(lines, StatsSums{});
}

void AttentionStats::check_line(std::size_t line) const {
  if (per_sentence_ && line >= lines_) throw std::logic_error("per-sentence statistics of a line out of range");
}

void AttentionStats::add_empty(std::size_t line) {
  check_line(line);
  ++empty_sources_;
}

void AttentionStats::add(const model::SentenceMaps& maps, std::size_t line) {
  if (maps.encoder.size() != encoder_.size() || maps.decoder.size() != decoder_.size() ||
      maps.cross.size() != cross_.size())
    throw std::logic_error("attention maps of another model");
  check_line(line);
  ++sentences_;
  source_tokens_ += maps.src_len;
  target_tokens_ += maps.tgt_len;
  // The sentence's own sums first, then added to the totals (and to its line).
  std::vector<StatsSums> sentence(static_cast<std::size_t>(heads_));
  const auto keep = [&](Layer& layer) {
    for (std::size_t h = 0; h < sentence.size(); ++h) {
      layer.heads[h] += sentence[h];
      if (per_sentence_) layer.lines[line] += sentence[h];
    }
  };
  std::vector<nn::KeyWindow> windows(static_cast<std::size_t>(heads_));
  const auto self = [&](std::vector<Layer>& layers, const std::vector<nn::MixerMaps>& mixer_maps, bool causal) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const nn::MixerMaps& m = mixer_maps[l];
      if (m.heads != heads_ || m.weights.size() != static_cast<std::size_t>(m.heads * m.length * m.length))
        throw std::logic_error("a mixer exported maps of the wrong shape");
      // A kind no module reports (none today) is read as multi-head attention: every key, or causal.
      const nn::Mechanism* mechanism = nn::mechanism_of_kind(layers[l].mechanism);
      const nn::Mechanism& hooks = mechanism ? *mechanism : nn::find_mechanism("mha");
      for (std::int64_t h = 0; h < heads_; ++h)
        windows[static_cast<std::size_t>(h)] = hooks.key_window(m.extras, causal, h);
      std::fill(sentence.begin(), sentence.end(), StatsSums{});
      add_map(sentence, m.weights.data(), heads_, m.length, m.length, windows, false, within_);
      keep(layers[l]);
    }
  };
  self(encoder_, maps.encoder, false);
  self(decoder_, maps.decoder, true);
  std::fill(windows.begin(), windows.end(), nn::KeyWindow{});
  for (std::size_t l = 0; l < cross_.size(); ++l) {
    if (maps.cross[l].size() != static_cast<std::size_t>(heads_ * maps.tgt_len * maps.src_len))
      throw std::logic_error("cross-attention maps of the wrong shape");
    std::fill(sentence.begin(), sentence.end(), StatsSums{});
    add_map(sentence, maps.cross[l].data(), heads_, maps.tgt_len, maps.src_len, windows, true, within_);
    keep(cross_[l]);
  }
}

ordered_json AttentionStats::to_json(const json& header) const {
  ordered_json doc;
  for (const char* key : {"format", "version", "attn_version", "model", "mode", "search"})
    if (header.contains(key)) doc[key] = header[key];
  for (auto it = header.begin(); it != header.end(); ++it)
    if (!doc.contains(it.key())) doc[it.key()] = it.value();
  doc["within"] = within_;
  doc["sentences"] = sentences_ + empty_sources_;
  doc["empty_sources"] = empty_sources_;
  doc["source_tokens"] = {{"total", source_tokens_},
                          {"mean", mean_json(static_cast<double>(source_tokens_), sentences_)}};
  doc["target_tokens"] = {{"total", target_tokens_},
                          {"mean", mean_json(static_cast<double>(target_tokens_), sentences_)}};
  ordered_json components = ordered_json::object();
  const auto component = [&](const char* name, const char* from, const char* to, const std::vector<Layer>& layers) {
    ordered_json out_layers = ordered_json::array();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      ordered_json heads = ordered_json::array();
      StatsSums all;
      for (std::size_t h = 0; h < layers[l].heads.size(); ++h) {
        ordered_json one = {{"head", h}};
        const ordered_json sums = layers[l].heads[h].to_json();
        for (auto it = sums.begin(); it != sums.end(); ++it) one[it.key()] = it.value();
        heads.push_back(std::move(one));
        all += layers[l].heads[h];
      }
      out_layers.push_back({{"layer", l},
                            {"mechanism", layers[l].mechanism},
                            {"all_heads", all.to_json()},
                            {"heads", std::move(heads)}});
    }
    components[name] = {{"from", from}, {"to", to}, {"layers", std::move(out_layers)}};
  };
  component("encoder", "source", "source", encoder_);
  component("decoder", "target", "target_input", decoder_);
  component("cross", "target", "source", cross_);
  doc["components"] = std::move(components);
  if (per_sentence_) doc["per_sentence"] = per_sentence_json();
  return doc;
}

ordered_json AttentionStats::per_sentence_json() const {
  // Sums to 4 decimals: each line has tens of rows or more, so a mean over lines moves by about 1e-6 at most.
  const auto rounded = [](double v) { return std::round(v * 1e4) / 1e4; };
  ordered_json out = {{"lines", lines_}};
  const auto component = [&](const char* name, const std::vector<Layer>& layers) {
    ordered_json out_layers = ordered_json::array();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      ordered_json rows = ordered_json::array();
      std::array<ordered_json, kStatisticNames.size()> sums;
      for (ordered_json& s : sums) s = ordered_json::array();
      for (const StatsSums& line : layers[l].lines) {
        rows.push_back(line.rows);
        const std::array<double, kStatisticNames.size()> values = {line.entropy, line.normalised_entropy,
                                                                   line.max_weight, line.distance, line.mass_within};
        for (std::size_t k = 0; k < values.size(); ++k) sums[k].push_back(rounded(values[k]));
      }
      ordered_json layer = {{"layer", l}, {"rows", std::move(rows)}};
      for (std::size_t k = 0; k < sums.size(); ++k) layer[kStatisticNames[k]] = std::move(sums[k]);
      out_layers.push_back(std::move(layer));
    }
    out[name] = std::move(out_layers);
  };
  component("encoder", encoder_);
  component("decoder", decoder_);
  component("cross", cross_);
  return out;
}

std::string stats_document_text(const ordered_json& doc) {
  constexpr auto kReplace = ordered_json::error_handler_t::replace;
  const auto found = doc.find("per_sentence");
  if (found == doc.end()) return doc.dump(1, ' ', false, kReplace) + "\n";
  ordered_json rest = doc;
  rest.erase("per_sentence");
  std::string text = rest.dump(1, ' ', false, kReplace);
  text.pop_back();  // the closing brace, after a newline
  text.pop_back();
  text += ",\n \"per_sentence\": {";
  bool first = true;
  for (auto it = found->begin(); it != found->end(); ++it) {
    text += std::string(first ? "" : ",") + "\n  " + ordered_json(it.key()).dump() + ": ";
    first = false;
    if (!it.value().is_array()) {
      text += it.value().dump(-1, ' ', false, kReplace);
      continue;
    }
    text += "[";
    for (std::size_t l = 0; l < it.value().size(); ++l)
      text += std::string(l ? "," : "") + "\n   " + it.value()[l].dump(-1, ' ', false, kReplace);
    text += "\n  ]";
  }
  return text + "\n }\n}\n";
}

std::string AttentionStats::table() const {
  std::string out;
  char line[256];
  const auto mean = [](std::int64_t total, std::int64_t n) { return n ? static_cast<double>(total) / n : 0.0; };
  std::snprintf(line, sizeof line,
                "# %lld sentences (%lld empty, not run); mean length: source %.2f, target %.2f subwords (with </s>)\n",
                static_cast<long long>(sentences_ + empty_sources_), static_cast<long long>(empty_sources_),
                mean(source_tokens_, sentences_), mean(target_tokens_, sentences_));
  out += line;
  std::snprintf(line, sizeof line,
                "# means over query rows with >= 2 allowed keys; entropy in nats; norm = entropy / log(keys);\n"
                "# distance from the diagonal (cross: scaled by the length ratio); mass within +-%lld of it\n",
                static_cast<long long>(within_));
  out += line;
  std::snprintf(line, sizeof line, "%-9s %5s %-9s %4s %10s %8s %8s %8s %9s %8s\n", "component", "layer", "mechanism",
                "head", "rows", "entropy", "norm", "max_w", "distance", "within");
  out += line;
  const auto row = [&](const char* component, std::size_t l, const std::string& mechanism, const std::string& head,
                       const StatsSums& s) {
    // A mean, or "-" when no row of this head had two keys.
    const auto m = [&](double sum, int width, int decimals) {
      char text[32];
      if (s.rows == 0)
        std::snprintf(text, sizeof text, "%*s", width, "-");
      else
        std::snprintf(text, sizeof text, "%*.*f", width, decimals, sum / static_cast<double>(s.rows));
      return std::string(text);
    };
    std::snprintf(line, sizeof line, "%-9s %5zu %-9s %4s %10lld %s %s %s %s %s\n", component, l, mechanism.c_str(),
                  head.c_str(), static_cast<long long>(s.rows), m(s.entropy, 8, 4).c_str(),
                  m(s.normalised_entropy, 8, 4).c_str(), m(s.max_weight, 8, 4).c_str(), m(s.distance, 9, 3).c_str(),
                  m(s.mass_within, 8, 4).c_str());
    out += line;
  };
  const auto component = [&](const char* name, const std::vector<Layer>& layers) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      StatsSums all;
      for (std::size_t h = 0; h < layers[l].heads.size(); ++h) {
        row(name, l, layers[l].mechanism, std::to_string(h), layers[l].heads[h]);
        all += layers[l].heads[h];
      }
      row(name, l, layers[l].mechanism, "all", all);
    }
  };
  component("encoder", encoder_);
  component("decoder", decoder_);
  component("cross", cross_);
  return out;
}

}  // namespace attn::decode
