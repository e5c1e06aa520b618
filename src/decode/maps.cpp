#include "attn/decode/maps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "attn/core/error.h"
#include "attn/decode/document_header.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/text/vocab.h"

namespace attn::decode {

namespace {

using nlohmann::json;
using nn::rounded_numbers;

constexpr MapComponent kAllComponents[] = {MapComponent::encoder, MapComponent::decoder, MapComponent::cross};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

double pow10(int precision) { return std::pow(10.0, precision); }

// Text of a JSON string; invalid UTF-8 (a tolerant read of the input) becomes U+FFFD.
std::string json_string(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

// A score with 6 decimals: enough to rank hypotheses, short to read.
std::string score_text(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return "null";
  return json(std::round(*v * 1e6) / 1e6).dump();
}

// `units` of 10^-precision as a decimal: 0, 1, 0.25, 0.0004.
void append_units(std::string& out, std::int64_t units, std::int64_t scale, int precision) {
  if (units < 0) {
    out += '-';
    units = -units;
  }
  out += std::to_string(units / scale);
  std::int64_t frac = units % scale;
  if (frac == 0) return;
  char digits[24];
  int n = precision;
  while (frac % 10 == 0) {  // trailing zeros say nothing
    frac /= 10;
    --n;
  }
  std::snprintf(digits, sizeof digits, ".%0*lld", n, static_cast<long long>(frac));
  out += digits;
}

// A mixer's extras as the document shows them (docs/attention-json.md): its
// mechanism shapes the keys it knows (nn/mechanism.h); keys it does not know
// pass through, rounded.
json shape_extras(const std::string& kind, const json& raw, bool causal, const std::vector<std::int64_t>& heads,
                  int precision) {
  if (!raw.is_object()) return json::object();
  json rest = raw;
  const nn::Mechanism* mechanism = nn::mechanism_of_kind(kind);
  json e = mechanism ? mechanism->document_extras(rest, causal, heads, precision) : json::object();
  for (auto it = rest.begin(); it != rest.end(); ++it) e[it.key()] = rounded_numbers(it.value(), precision);
  return e;
}

// weights: [H, from, to] → [[[...]]] of the selected heads, each row rounded with its sum kept.
void append_weights(std::string& out, const float* weights, std::int64_t from, std::int64_t to,
                    const std::vector<std::int64_t>& heads, int precision) {
  const auto scale = static_cast<std::int64_t>(std::llround(pow10(precision)));
  std::vector<std::int64_t> units(static_cast<std::size_t>(to));
  out += '[';
  for (std::size_t k = 0; k < heads.size(); ++k) {
    if (k) out += ',';
    out += '[';
    for (std::int64_t i = 0; i < from; ++i) {
      if (i) out += ',';
      round_preserving_sum(weights + (heads[k] * from + i) * to, to, precision, units.data());
      out += '[';
      for (std::int64_t j = 0; j < to; ++j) {
        if (j) out += ',';
        append_units(out, units[static_cast<std::size_t>(j)], scale, precision);
      }
      out += ']';
    }
    out += ']';
  }
  out += ']';
}

std::string pieces_json(const text::Bpe& bpe, const std::vector<std::string>& prefix,
                        const std::vector<std::int32_t>& ids, const std::vector<std::string>& suffix) {
  json out = json::array();
  for (const std::string& p : prefix) out.push_back(p);
  for (std::int32_t id : ids) out.push_back(bpe.vocab().piece(id));
  for (const std::string& p : suffix) out.push_back(p);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::int64_t layer_count(MapComponent c, const model::ModelConfig& config) {
  return c == MapComponent::encoder ? config.enc_layers : config.dec_layers;
}

std::vector<std::int64_t> all_or(const std::vector<std::int64_t>& chosen, std::int64_t count) {
  if (!chosen.empty()) return chosen;
  std::vector<std::int64_t> all(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

std::string index_list(const std::vector<std::int64_t>& v) { return json(v).dump(); }

}  // namespace

const char* component_name(MapComponent c) {
  switch (c) {
    case MapComponent::encoder: return "encoder";
    case MapComponent::decoder: return "decoder";
    case MapComponent::cross: return "cross";
  }
  return "?";
}

std::vector<MapComponent> parse_components(const std::string& text) {
  std::vector<bool> chosen(3, false);
  for (const std::string& part : split_commas(text)) {
    if (part == "all") {
      chosen.assign(3, true);
      continue;
    }
    bool known = false;
    for (MapComponent c : kAllComponents)
      if (part == component_name(c)) chosen[static_cast<std::size_t>(c)] = known = true;
    require(known, "--components: '" + part + "' is not a component; choose from encoder, decoder, cross (or all)");
  }
  std::vector<MapComponent> out;
  for (MapComponent c : kAllComponents)
    if (chosen[static_cast<std::size_t>(c)]) out.push_back(c);
  return out;
}

std::vector<std::int64_t> parse_indices(const std::string& text, const std::string& flag) {
  if (trim(text) == "all") return {};
  std::vector<std::int64_t> out;
  auto number = [&](const std::string& s, const std::string& part) {
    require(!s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos,
            flag + " " + text + ": '" + part + "' is not an index; give numbers from 0 like 0,2 or 1-3, or all");
    return std::stoll(s);
  };
  for (const std::string& part : split_commas(text)) {
    const std::size_t dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(number(part, part));
      continue;
    }
    const std::int64_t first = number(trim(part.substr(0, dash)), part),
                       last = number(trim(part.substr(dash + 1)), part);
    require(first <= last, flag + " " + text + ": the range '" + part + "' runs backwards");
    for (std::int64_t i = first; i <= last; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_selection(const MapsSelection& selection, const model::ModelConfig& config) {
  require(selection.precision >= 1 && selection.precision <= 9,
          "--precision must be between 1 and 9 decimals (got " + std::to_string(selection.precision) + ")");
  require(!selection.components.empty(), "--components: choose at least one of encoder, decoder, cross");
  for (std::int64_t h : selection.heads)
    require(h < config.heads, "--heads: head " + std::to_string(h) + " does not exist; the model has " +
                                  std::to_string(config.heads) + " heads (0-" + std::to_string(config.heads - 1) + ")");
  for (MapComponent c : selection.components) {
    const std::int64_t count = layer_count(c, config);
    for (std::int64_t l : selection.layers)
      require(l < count, std::string("--layers: layer ") + std::to_string(l) + " does not exist; the " +
                             (c == MapComponent::encoder ? "encoder" : "decoder") + " has " + std::to_string(count) +
                             " layers (0-" + std::to_string(count - 1) + "); narrow --layers or --components");
  }
}

std::vector<AttendedSentence> attend_chunk(nn::StepContext& ctx, const model::Seq2Seq& model,
                                           const std::vector<std::vector<std::int32_t>>& sources,
                                           const std::vector<std::vector<std::int32_t>>* targets,
                                           const SearchOptions& search, bool score_targets) {
  std::vector<AttendedSentence> out(sources.size());
  std::vector<std::size_t> live;  // sentences with a source; empty ones are not run
  std::vector<std::vector<std::int32_t>> live_sources, live_targets;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    out[i].source = sources[i];
    if (targets) out[i].target = (*targets)[i];
    if (sources[i].empty()) continue;
    live.push_back(i);
    live_sources.push_back(sources[i]);
  }
  if (live.empty()) return out;

  if (!targets) {
    SearchOptions best_only = search;
    best_only.nbest = 1;
    ctx.arena.reset();
    const auto hyps = beam_search(ctx, model, live_sources, best_only);
    for (std::size_t k = 0; k < live.size(); ++k) {
      AttendedSentence& s = out[live[k]];
      s.target = hyps[k][0].tokens;
      s.score = hyps[k][0].score;
      s.logprob = hyps[k][0].logprob;
    }
  }
  for (std::size_t i : live) live_targets.push_back(out[i].target);
  const model::Batch batch = model::make_batch(live_sources, live_targets);

  // The teacher-forced forward over the chosen output: the weights it used are
  // the ones incremental decoding used to produce it.
  ctx.arena.reset();
  std::vector<model::SentenceMaps> maps = model.attention_maps(ctx, batch);
  for (std::size_t k = 0; k < live.size(); ++k) out[live[k]].maps = std::move(maps[k]);

  if (targets && score_targets) {  // forced mode: score the given target
    const std::int64_t tt = batch.tgt_len, V = model.config().vocab_size;
    std::vector<float> logprobs(static_cast<std::size_t>(batch.size * tt * V));
    ctx.arena.reset();
    model.teacher_forced_log_probs(ctx, batch, logprobs.data());
    for (std::size_t k = 0; k < live.size(); ++k) {
      const auto b = static_cast<std::int64_t>(k);
      double sum = 0.0;
      for (std::int64_t t = 0; t < batch.tgt_lengths[b]; ++t)
        sum += logprobs[static_cast<std::size_t>((b * tt + t) * V + batch.tgt_out[b * tt + t])];
      AttendedSentence& s = out[live[k]];
      s.logprob = sum;
      s.score = sum / std::pow(static_cast<double>(batch.tgt_lengths[b]), static_cast<double>(search.lenpen));
    }
  }
  ctx.arena.reset();
  return out;
}

json maps_header(const model::Seq2Seq& model, const std::string& model_file, bool forced, const SearchOptions& search,
                 const MapsSelection& selection) {
  json components = json::array();
  for (MapComponent c : selection.components) components.push_back(component_name(c));
  json header = document_header(kMapsFormat, kMapsFormatVersion, model, model_file, forced, search);
  header["search"] = {{"beam", search.beam},
                      {"lenpen", search.lenpen},
                      {"max_len_a", search.max_len_a},
                      {"max_len_b", search.max_len_b},
                      {"no_repeat_ngram_size", search.no_repeat_ngram}};
  header["precision"] = selection.precision;
  header["components"] = components;
  return header;
}

std::string sentence_json(const AttendedSentence& s, std::int64_t index, const std::string& source_line,
                          const std::string& translation, const text::Bpe& bpe, const model::Seq2Seq& model,
                          const MapsSelection& selection, const LinePlace* place) {
  const model::ModelConfig& config = model.config();
  const bool ran = !s.source.empty();  // empty sources have no tokens and no maps
  const std::vector<std::int64_t> heads = all_or(selection.heads, config.heads);
  const std::vector<std::string> enc_kinds = model.encoder_mixer_kinds(), dec_kinds = model.decoder_mixer_kinds();
  const std::int64_t src_len = ran ? static_cast<std::int64_t>(s.source.size()) : 0;
  const std::int64_t tgt_len = ran ? static_cast<std::int64_t>(s.target.size()) + 1 : 0;
  if (ran && (s.maps.src_len != src_len || s.maps.tgt_len != tgt_len))
    throw std::logic_error("attention maps do not match the sentence's token counts");

  std::string out = "{\"index\":" + std::to_string(index);
  if (place) {
    out += ",\"line\":" + std::to_string(place->line);
    out += ",\"line_sentence\":" + std::to_string(place->sentence);
  }
  out += ",\"source\":" + json_string(source_line);
  out += ",\"translation\":" + json_string(translation);
  out += ",\"score\":" + score_text(s.score);
  out += ",\"logprob\":" + score_text(s.logprob);
  // Decoder rows are labelled by the token each position predicts (fairseq's
  // convention), the decoder's self-attention columns by the token each position reads.
  const std::vector<std::int32_t> none;
  const std::vector<std::string> eos{"</s>"}, bos{"<s>"}, nothing;
  out += ",\"source_tokens\":" + pieces_json(bpe, nothing, ran ? s.source : none, nothing);
  out += ",\"target_tokens\":" + pieces_json(bpe, nothing, ran ? s.target : none, ran ? eos : nothing);
  out += ",\"target_input_tokens\":" + pieces_json(bpe, ran ? bos : nothing, ran ? s.target : none, nothing);
  out += ",\"components\":{";
  for (std::size_t ci = 0; ran && ci < selection.components.size(); ++ci) {  // an empty source has no maps
    const MapComponent c = selection.components[ci];
    const char* from = c == MapComponent::encoder ? "source" : "target";
    const char* to = c == MapComponent::decoder ? "target_input" : "source";
    const std::int64_t rows = c == MapComponent::encoder ? src_len : tgt_len;
    const std::int64_t cols = c == MapComponent::decoder ? tgt_len : src_len;
    if (ci) out += ',';
    out += std::string("\"") + component_name(c) + "\":{\"from\":\"" + from + "\",\"to\":\"" + to + "\"";
    out += ",\"heads\":" + index_list(heads) + ",\"layers\":[";
    const std::vector<std::int64_t> layers = all_or(selection.layers, layer_count(c, config));
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const auto l = static_cast<std::size_t>(layers[k]);
      std::string kind = "mha";  // cross-attention is always multi-head attention
      const float* weights = nullptr;
      json extras = json::object();
      if (c == MapComponent::cross) {
        weights = s.maps.cross[l].data();
      } else {
        const nn::MixerMaps& m = c == MapComponent::encoder ? s.maps.encoder[l] : s.maps.decoder[l];
        if (m.heads != config.heads || m.length != rows ||
            m.weights.size() != static_cast<std::size_t>(m.heads * rows * rows))
          throw std::logic_error("a mixer exported maps of the wrong shape");
        kind = c == MapComponent::encoder ? enc_kinds[l] : dec_kinds[l];
        weights = m.weights.data();
        extras = shape_extras(kind, m.extras, c == MapComponent::decoder, heads, selection.precision);
      }
      if (k) out += ',';
      out += "{\"layer\":" + std::to_string(layers[k]) + ",\"mechanism\":" + json_string(kind) + ",\"weights\":";
      append_weights(out, weights, rows, cols, heads, selection.precision);
      out += ",\"extras\":" + extras.dump(-1, ' ', false, json::error_handler_t::replace) + '}';
    }
    out += "]}";
  }
  out += "}}";
  return out;
}

void run_attend(nn::StepContext& ctx, const model::Seq2Seq& model, const text::Bpe& bpe, const AttendInput& input,
                const SearchOptions& search, const MapsSelection& selection,
                const std::function<void(std::int64_t, const std::string&)>& sink) {
  const std::vector<std::string>& lines = *input.source_lines;
  const bool forced = input.targets != nullptr;
  const auto n = static_cast<std::int64_t>(lines.size());
  const std::int64_t chunk = std::max<std::int64_t>(1, input.chunk);
  for (std::int64_t start = 0; start < n; start += chunk) {
    const std::int64_t end = std::min(n, start + chunk);
    const std::vector<std::vector<std::int32_t>> sources(input.sources->begin() + start, input.sources->begin() + end);
    std::vector<std::vector<std::int32_t>> targets;
    if (forced) targets.assign(input.targets->begin() + start, input.targets->begin() + end);
    const std::vector<AttendedSentence> done = attend_chunk(ctx, model, sources, forced ? &targets : nullptr, search);
    for (std::int64_t i = start; i < end; ++i) {
      const AttendedSentence& s = done[static_cast<std::size_t>(i - start)];
      const std::string translation = forced ? (*input.target_lines)[static_cast<std::size_t>(i)]
                                             : bpe.decode(s.target);
      sink(i, sentence_json(s, i, lines[static_cast<std::size_t>(i)], translation, bpe, model, selection,
                            input.places ? &(*input.places)[static_cast<std::size_t>(i)] : nullptr));
    }
  }
}

MapsJsonWriter::MapsJsonWriter(std::FILE* out, const json& header, bool jsonl) : out_(out), jsonl_(jsonl) {
  head_ = header.dump(-1, ' ', false, json::error_handler_t::replace);
  head_.pop_back();  // the closing brace: "sentences" comes last
  head_ += ",\"sentences\":[";
  if (!jsonl_) {
    std::fputs(head_.c_str(), out_);
    std::fputc('\n', out_);
  }
}

void MapsJsonWriter::add(const std::string& sentence) {
  if (jsonl_) {  // every line a complete document with one sentence
    std::fputs(head_.c_str(), out_);
    std::fputs(sentence.c_str(), out_);
    std::fputs("]}\n", out_);
    std::fflush(out_);
    return;
  }
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
  std::fputs(sentence.c_str(), out_);
}

void MapsJsonWriter::finish() {
  if (!jsonl_) std::fputs(first_ ? "]}\n" : "\n]}\n", out_);
  std::fflush(out_);
}

}  // namespace attn::decode
