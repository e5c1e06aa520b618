#include "attn/serve/api.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/decode/maps.h"
#include "attn/text/sentence_split.h"

namespace attn::serve {

namespace {

using json = nlohmann::json;

// A request the client must change: its status and message.
struct Refusal {
  int status;
  std::string message;
};

// The DOM builder of nlohmann::json, remembering the last key it met: a number
// too large for a double (1e400) is then refused naming its field.
class FieldNamingParser : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit FieldNamingParser(json& out) : json_sax_dom_parser(out, false) {}
  bool key(json::string_t& k) {
    last_key = k;
    return json_sax_dom_parser::key(k);
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    error = e.what();
    overflow = e.id == 406;  // out_of_range.406: number overflow
    return false;
  }
  std::string last_key, error;
  bool overflow = false;
};

json parse_body(const std::string& body) {
  if (body.empty()) throw Refusal{400, "the request has no body; send a JSON object (docs/serve.md)"};
  // nlohmann's lexer takes a NUL byte for the end of the input, so a valid
  // value, a NUL and anything after it would pass. JSON allows a raw NUL
  // nowhere (in a string it is written \u0000): any is refused here.
  if (const std::size_t nul = body.find('\0'); nul != std::string::npos)
    throw Refusal{400, "the body is not valid JSON: byte " + std::to_string(nul + 1) +
                           " is a NUL (0x00), which JSON allows nowhere; write it \\u0000 inside a string"};
  json request;
  FieldNamingParser parser(request);
  if (!json::sax_parse(body, &parser) || !parser.error.empty()) {
    if (parser.overflow) {
      const std::size_t quote = parser.error.find('\'');  // the number, as nlohmann quotes it
      const std::string number = quote == std::string::npos ? "" : " (" + parser.error.substr(quote) + ")";
      throw Refusal{400, (parser.last_key.empty() ? std::string("the body") : "\"" + parser.last_key + "\"") +
                             " holds a number out of range" + number + "; see docs/serve.md for the field's range"};
    }
    // nlohmann's message names the byte and what it expected (invalid UTF-8 included).
    throw Refusal{400, "the body is not valid JSON: " + parser.error};
  }
  if (!request.is_object()) throw Refusal{400, "the body is JSON but not an object; send {\"…\": …} (docs/serve.md)"};
  return request;
}

void refuse_unknown_fields(const json& request, const std::set<std::string>& fields) {
  for (const auto& [key, value] : request.items()) {
    if (fields.count(key)) continue;
    std::string list;
    for (const std::string& f : fields) list += (list.empty() ? "" : ", ") + f;
    throw Refusal{400, "unknown field \"" + key + "\"; the fields are " + list};
  }
}

// An integer as JSON Schema defines one: any number with no fractional part
// (5 and 5.0 alike), checked against the range before it is converted.
std::int64_t int_field(const json& request, const std::string& key, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi) {
  if (!request.contains(key)) return fallback;
  const json& v = request[key];
  const std::string range = "an integer between " + std::to_string(lo) + " and " + std::to_string(hi);
  if (!v.is_number()) throw Refusal{400, "\"" + key + "\" must be " + range};
  const auto out_of_range = [&] { return Refusal{400, "\"" + key + "\" is " + v.dump() + "; give " + range}; };
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) throw out_of_range();
  } else if (v.is_number_float()) {
    const double x = v.get<double>();
    if (x != std::floor(x)) throw Refusal{400, "\"" + key + "\" is " + v.dump() + "; give " + range};
    if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi))) throw out_of_range();
    return static_cast<std::int64_t>(x);
  }
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) throw out_of_range();
  return x;
}

float number_field(const json& request, const std::string& key, float fallback, float lo, float hi) {
  if (!request.contains(key)) return fallback;
  const json& v = request[key];
  const auto range = json(lo).dump() + " and " + json(hi).dump();
  if (!v.is_number()) throw Refusal{400, "\"" + key + "\" must be a number between " + range};
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) throw Refusal{400, "\"" + key + "\" is " + v.dump() + "; give a number between " + range};
  return static_cast<float>(x);
}

bool bool_field(const json& request, const std::string& key, bool fallback) {
  if (!request.contains(key)) return fallback;
  if (!request[key].is_boolean()) throw Refusal{400, "\"" + key + "\" must be true or false"};
  return request[key].get<bool>();
}

// Both endpoints search as attn translate and attn attend do by default (SearchOptions' defaults: beam 5).
decode::SearchOptions search_fields(const json& request, const Limits& limits) {
  decode::SearchOptions search;
  search.beam = static_cast<int>(int_field(request, "beam", search.beam, 1, limits.max_beam));
  search.lenpen = number_field(request, "lenpen", search.lenpen, 0.0f, 10.0f);
  search.max_len_a = number_field(request, "max_len_a", search.max_len_a, 0.0f, 100.0f);
  search.max_len_b = number_field(request, "max_len_b", search.max_len_b, 0.0f, 1000.0f);
  search.nbest = static_cast<int>(int_field(request, "nbest", search.nbest, 1, search.beam));
  return search;
}

std::string loaded_names(const std::vector<ServedModel>& models) {
  std::string list;
  for (const ServedModel& m : models) list += (list.empty() ? "" : ", ") + m.name;
  return list;
}

std::size_t find_model(const std::vector<ServedModel>& models, const json& name) {
  if (!name.is_string())
    throw Refusal{400, "a model name must be a string; the loaded models are " + loaded_names(models)};
  for (std::size_t i = 0; i < models.size(); ++i)
    if (models[i].name == name.get<std::string>()) return i;
  throw Refusal{404, "no model named " + name.dump() + "; the loaded models are " + loaded_names(models) +
                         " (GET /v1/models)"};
}

// Both endpoints name things the same way: "models", an array of model names,
// and "sentences", an array of strings. The keys of the first version,
// "model" (one name) and "sentence" (one string), are still read (deprecated).

// The model names of a request: "models", or the deprecated "model"; none given: empty.
std::vector<std::size_t> model_fields(const json& request, const std::vector<ServedModel>& models) {
  if (request.contains("model") && request.contains("models"))
    throw Refusal{400, "give \"models\" (or the deprecated \"model\"), not both"};
  std::vector<std::size_t> chosen;
  if (request.contains("model")) {
    chosen.push_back(find_model(models, request["model"]));
    return chosen;
  }
  if (!request.contains("models")) return chosen;
  const json& names = request["models"];
  if (!names.is_array() || names.empty())
    throw Refusal{400, "\"models\" must be a non-empty array of model names: " + loaded_names(models)};
  // Each model at most once, so the list is as long as the loaded models at most.
  if (names.size() > models.size())
    throw Refusal{400, "\"models\" lists " + std::to_string(names.size()) + " names; " + std::to_string(models.size()) +
                           " models are loaded, each may be named once: " + loaded_names(models)};
  for (const json& name : names) {
    const std::size_t m = find_model(models, name);
    if (std::find(chosen.begin(), chosen.end(), m) != chosen.end())
      throw Refusal{400, "\"models\" names " + name.dump() + " twice; name each model once"};
    chosen.push_back(m);
  }
  return chosen;
}

// The sentences of a request: "sentences" (an array of strings), or the deprecated
// "sentence" (one string). one_only: the endpoint takes exactly one.
std::vector<std::string> sentence_fields(const json& request, const Limits& limits, bool one_only) {
  std::vector<std::string> out;
  if (request.contains("sentence") && request.contains("sentences"))
    throw Refusal{400, "give \"sentences\" (or the deprecated \"sentence\"), not both"};
  if (request.contains("sentence")) {
    if (!request["sentence"].is_string()) throw Refusal{400, "\"sentence\" must be a string"};
    out.push_back(request["sentence"].get<std::string>());
    return out;
  }
  if (!request.contains("sentences"))
    throw Refusal{400, one_only
                           ? "the request needs \"sentences\": an array of one string, the text to translate and show"
                           : "the request needs \"sentences\": an array of strings"};
  const json& list = request["sentences"];
  if (!list.is_array()) throw Refusal{400, "\"sentences\" must be an array of strings"};
  if (one_only && list.size() != 1)
    throw Refusal{400, "\"sentences\" holds " + std::to_string(list.size()) +
                           " strings; the maps are of one sentence: give an array of one"};
  if (static_cast<std::int64_t>(list.size()) > limits.max_sentences)
    throw Refusal{413, "the request holds " + std::to_string(list.size()) + " sentences; the limit is " +
                           std::to_string(limits.max_sentences) + " per request (--max-sentences); split it"};
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) throw Refusal{400, "\"sentences\"[" + std::to_string(i) + "] is not a string"};
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

// A unit refused for its length, in the client's terms: its place in the
// "sentences" it sent (from 1), its part when split_sentences split it, its
// length in subwords (counted up to ten times the limit, so that a megabyte
// with no space costs no more than a sentence ten times too long) and the limit with what sets it.
Refusal too_long(const ServedModel& served, const text::SentenceUnits& units, std::size_t u, bool split,
                 std::int64_t limit, const Limits& limits) {
  const std::int64_t cap = limit * 10;
  const std::size_t n = served.loaded.bpe.encode_prefix(units.texts[u], static_cast<std::size_t>(cap) + 1).size();
  const text::LinePlace& place = units.places[u];
  std::string where = "sentence " + std::to_string(place.line + 1);
  const bool parts = split && (u + 1 < units.places.size() && units.places[u + 1].line == place.line);
  if (split && (place.sentence > 0 || parts))
    where += " (its part " + std::to_string(place.sentence + 1) + " as split_sentences splits it)";
  const std::string count = static_cast<std::int64_t>(n) > cap ? "more than " + std::to_string(cap) : std::to_string(n);
  const std::string bound = limits.max_subwords <= limit
                                ? "; this server takes at most " + std::to_string(limit) + " (--max-input-len)"
                                : ", which takes at most " + std::to_string(limit) +
                                      " (the positions it was trained with)";
  return {413,
          where + " has " + count + " subwords for model " + served.name + bound + "; split it or send it shorter"};
}

// Subword ids of each unit; a unit longer than the limit is refused, not cut.
std::vector<std::vector<std::int32_t>> encode_units(const ServedModel& served, const text::SentenceUnits& units,
                                                    bool split, const Limits& limits) {
  const std::int64_t limit = std::min(limits.max_subwords, served.loaded.model->config().max_positions);
  std::vector<std::vector<std::int32_t>> ids(units.texts.size());
  for (std::size_t u = 0; u < ids.size(); ++u) {
    // One id past the limit tells an over-long unit, without encoding the rest of it.
    ids[u] = served.loaded.bpe.encode_prefix(units.texts[u], static_cast<std::size_t>(limit) + 1);
    if (static_cast<std::int64_t>(ids[u].size()) > limit) throw too_long(served, units, u, split, limit, limits);
  }
  return ids;
}

// Waits for the decoder until the request's deadline, or until its client
// leaves or the server gives up on it; then abandons the job (its search stops
// at its next step) and refuses.
template <typename Future>
void wait_for(Future& result, const std::shared_ptr<std::atomic<bool>>& abandoned, const RequestContext& context,
              std::chrono::steady_clock::time_point deadline, const DecodeQueue& queue,
              std::chrono::milliseconds limit) {
  while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    const bool gone = context.cancelled->load(), stopping = queue.cancelled();
    if (!gone && !stopping && std::chrono::steady_clock::now() < deadline) continue;
    abandoned->store(true);
    if (stopping)
      throw Refusal{503, "the server is shutting down and gave up on this request; retry on another instance"};
    if (gone) throw Refusal{499, "the client closed the connection"};
    throw Refusal{503, "no answer within " + std::to_string(limit.count() / 1000.0).substr(0, 5) +
                           " s (--timeout): the server is busy; retry later or send fewer sentences"};
  }
}

// A request's work: beam × the longest output its search allows, summed over the sentences.
std::int64_t search_work(const decode::SearchOptions& search, const std::vector<std::vector<std::int32_t>>& ids,
                         std::int64_t positions) {
  std::int64_t work = 0;
  for (const std::vector<std::int32_t>& s : ids) {
    if (s.empty()) continue;
    const double longest = search.max_len_a * static_cast<double>(s.size()) + search.max_len_b;
    work += search.beam * std::clamp<std::int64_t>(static_cast<std::int64_t>(longest) + 1, 1, positions);
  }
  return work;
}

void check_work(std::int64_t work, const Limits& limits) {
  if (work > limits.max_work)
    throw Refusal{413, "the request asks for " + std::to_string(work) +
                           " decoder steps (beam × longest output, summed "
                           "over sentences and models); the limit is " +
                           std::to_string(limits.max_work) +
                           " (--max-work); lower beam or max_len_a/max_len_b, or send fewer sentences"};
}

std::string shown_file(const ServedModel& m, const Limits& limits) {
  return limits.show_paths ? m.file : std::filesystem::path(m.file).filename().string();
}

Refusal queue_full(const DecodeQueue& queue) {
  return {429, "the decoder's queue is full (" + std::to_string(queue.queued_sentences()) +
                   " sentences waiting, --max-queue); retry later"};
}

// A runtime failure (out of memory, a model error) is the server's fault: 500, and the server goes on.
template <typename Handler>
Response answer(Handler&& handler) {
  try {
    return handler();
  } catch (const Refusal& r) {
    return error_response(r.status, r.message);
  } catch (const decode::Cancelled&) {
    return error_response(503, "the server is shutting down and gave up on this request; retry on another instance");
  } catch (const std::bad_alloc&) {
    return error_response(503, "out of memory for this request; send fewer or shorter sentences");
  } catch (const Error& e) {
    return error_response(400, e.what());
  } catch (const std::exception& e) {
    return error_response(500, std::string("internal error: ") + e.what() + " (please report it)");
  }
}

}  // namespace

Response error_response(int status, const std::string& message) {
  return {status, json{{"error", {{"status", status}, {"message", message}}}}.dump(-1, ' ', false,
                                                                                   json::error_handler_t::replace)};
}

Api::Api(const std::vector<ServedModel>& models, DecodeQueue& queue, Limits limits)
    : models_(models), queue_(queue), limits_(limits) {}

Response Api::models() const {
  json list = json::array();
  for (const ServedModel& m : models_) {
    const model::Seq2Seq& model = *m.loaded.model;
    list.push_back({{"name", m.name},
                    {"file", shown_file(m, limits_)},
                    {"arch", model.config().arch},
                    {"compute_type", model::compute_type_name(model.params().compute_type())},
                    {"parameters", model.parameter_count()},
                    {"config", model.config().to_json()},
                    {"encoder_mixers", model.encoder_mixer_kinds()},
                    {"decoder_mixers", model.decoder_mixer_kinds()}});
  }
  // The page sets its controls' bounds from these.
  const json limits{{"max_beam", limits_.max_beam},
                    {"max_sentences", limits_.max_sentences},
                    {"max_input_len", limits_.max_subwords},
                    {"max_body", limits_.max_body_bytes},
                    {"max_work", limits_.max_work},
                    {"timeout_s", static_cast<double>(limits_.timeout.count()) / 1000.0}};
  return {200, json{{"models", list}, {"limits", limits}}.dump(-1, ' ', false, json::error_handler_t::replace)};
}

Response Api::health() const {
  return {200, json{{"status", closed_ ? "draining" : "ok"},
                    {"models", models_.size()},
                    {"queued_sentences", queue_.queued_sentences()}}
                   .dump()};
}

Response Api::translate(const std::string& body, const RequestContext& context) {
  const auto deadline = context.deadline.value_or(std::chrono::steady_clock::now() + limits_.timeout);
  return answer([&]() -> Response {
    if (closed_) throw Refusal{503, "the server is shutting down; retry on another instance"};
    const json request = parse_body(body);
    refuse_unknown_fields(request, {"models", "sentences", "model", "sentence", "beam", "lenpen", "nbest", "max_len_a",
                                    "max_len_b", "split_sentences"});
    const std::vector<std::size_t> named = model_fields(request, models_);
    if (named.empty() && models_.size() > 1)
      throw Refusal{400,
                    "several models are loaded; name one with \"models\": [\"NAME\"], one of " + loaded_names(models_)};
    if (named.size() > 1)
      throw Refusal{400, "\"models\" names " + std::to_string(named.size()) +
                             " models; translate answers with one: give an array of one (attend compares several)"};
    const std::size_t which = named.empty() ? 0 : named.front();
    const ServedModel& served = models_[which];
    const decode::SearchOptions search = search_fields(request, limits_);
    const bool split = bool_field(request, "split_sentences", limits_.split_sentences);
    if (split && search.nbest > 1)
      throw Refusal{
          400, "\"split_sentences\" joins each line's best translations; it cannot be used with \"nbest\" above 1"};
    const std::vector<std::string> lines = sentence_fields(request, limits_, false);

    // The units decoded: the sentences, or with split_sentences the sentences within each.
    const text::SentenceUnits split_units = text::sentence_units(lines, split);
    const std::vector<std::string>& units = split_units.texts;
    if (static_cast<std::int64_t>(units.size()) > limits_.max_sentences)
      throw Refusal{413, "the request's lines hold " + std::to_string(units.size()) + " sentences; the limit is " +
                             std::to_string(limits_.max_sentences) + " per request (--max-sentences); split it"};
    const std::vector<std::vector<std::int32_t>> ids = encode_units(served, split_units, split, limits_);
    check_work(search_work(search, ids, served.loaded.model->config().max_positions), limits_);
    // Empty units translate to nothing and are not queued.
    std::vector<std::vector<std::int32_t>> queued;
    std::vector<std::size_t> queued_unit;
    for (std::size_t u = 0; u < ids.size(); ++u)
      if (!ids[u].empty()) {
        queued.push_back(ids[u]);
        queued_unit.push_back(u);
      }
    std::vector<Hypotheses> found(units.size());
    if (!queued.empty()) {
      std::optional<DecodeQueue::Submitted> job = queue_.translate(which, std::move(queued), search, context.client);
      if (!job) throw queue_full(queue_);
      wait_for(job->result, job->abandoned, context, deadline, queue_, limits_.timeout);
      std::vector<Hypotheses> decoded = job->result.get();
      for (std::size_t k = 0; k < decoded.size(); ++k) found[queued_unit[k]] = std::move(decoded[k]);
    }

    const text::Bpe& bpe = served.loaded.bpe;
    json translations = json::array();
    for (std::size_t i = 0, u = 0; i < lines.size(); ++i) {
      std::string text;
      double score_sum = 0;
      std::int64_t parts = 0;
      json hypotheses = json::array();
      for (; u < units.size() && split_units.places[u].line == static_cast<std::int64_t>(i); ++u) {
        if (found[u].empty()) continue;  // an empty unit
        text += (text.empty() ? "" : " ") + bpe.decode_line(found[u][0].tokens);
        score_sum += found[u][0].score;
        ++parts;
        if (search.nbest > 1)
          for (const decode::Hypothesis& h : found[u])
            hypotheses.push_back({{"text", bpe.decode_line(h.tokens)}, {"score", h.score}});
      }
      json entry{{"text", text}, {"score", parts ? score_sum / static_cast<double>(parts) : 0.0}};
      if (split) entry["sentences"] = parts;
      if (search.nbest > 1) entry["nbest"] = hypotheses;
      translations.push_back(entry);
    }
    return {200, json{{"model", served.name}, {"translations", translations}}.dump(-1, ' ', false,
                                                                                   json::error_handler_t::replace)};
  });
}

Response Api::attend(const std::string& body, const RequestContext& context) {
  const auto deadline = context.deadline.value_or(std::chrono::steady_clock::now() + limits_.timeout);
  return answer([&]() -> Response {
    if (closed_) throw Refusal{503, "the server is shutting down; retry on another instance"};
    const json request = parse_body(body);
    refuse_unknown_fields(request, {"models", "sentences", "model", "sentence", "beam", "lenpen", "max_len_a",
                                    "max_len_b", "split_sentences", "precision"});
    std::vector<std::size_t> chosen = model_fields(request, models_);
    if (chosen.empty())
      for (std::size_t i = 0; i < models_.size(); ++i) chosen.push_back(i);
    decode::SearchOptions search = search_fields(request, limits_);
    const bool split = bool_field(request, "split_sentences", limits_.split_sentences);
    decode::MapsSelection selection;
    selection.precision = static_cast<int>(int_field(request, "precision", 4, 1, 9));
    const text::SentenceUnits units = text::sentence_units(sentence_fields(request, limits_, true), split);
    if (static_cast<std::int64_t>(units.texts.size()) > limits_.max_sentences)
      throw Refusal{413, "the line holds " + std::to_string(units.texts.size()) + " sentences; the limit is " +
                             std::to_string(limits_.max_sentences) + " (--max-sentences)"};
    // What the decoder thread works on; shared, as a request that times out
    // returns while its work may still be running.
    struct AttendWork {
      text::SentenceUnits units;
      std::vector<std::vector<std::vector<std::int32_t>>> sources;  // [model][unit]
      std::vector<std::string> documents;                           // [model]
    };
    auto shared = std::make_shared<AttendWork>();
    shared->units = units;
    std::int64_t work = 0;
    for (std::size_t m : chosen) {
      shared->sources.push_back(encode_units(models_[m], units, split, limits_));
      work += search_work(search, shared->sources.back(), models_[m].loaded.model->config().max_positions);
    }
    check_work(work, limits_);
    shared->documents.resize(chosen.size());
    // The maps' search stops when the request is given up on.
    auto stop = std::make_shared<std::atomic<bool>>(false);
    search.stop = [stop, &queue = queue_] { return stop->load() || queue.cancelled(); };
    const auto run = [shared, chosen, search, selection, split, &models = models_, limits = limits_] {
      for (std::size_t k = 0; k < chosen.size(); ++k) {
        const ServedModel& served = models[chosen[k]];
        model::Seq2Seq& model = *served.loaded.model;
        thread_local Arena arena;
        arena.reset();
        Rng rng(0);
        nn::StepContext ctx{model.params(), arena, rng, false};
        decode::AttendInput input;
        input.source_lines = &shared->units.texts;
        input.sources = &shared->sources[k];
        if (split) input.places = &shared->units.places;
        std::string sentences;
        decode::run_attend(ctx, model, served.loaded.bpe, input, search, selection,
                           [&](std::int64_t, const std::string& s) {
                             sentences += (sentences.empty() ? "" : ",") + s;
                           });
        std::string head = decode::maps_header(model, shown_file(served, limits), false, search, selection)
                               .dump(-1, ' ', false, json::error_handler_t::replace);
        head.pop_back();  // the closing brace
        shared->documents[k] = head + ",\"sentences\":[" + sentences + "]}";
      }
    };
    std::optional<DecodeQueue::SubmittedTask> task =
        queue_.run(static_cast<std::int64_t>(units.texts.size() * chosen.size()), run, context.client);
    if (!task) throw queue_full(queue_);
    try {
      wait_for(task->done, task->abandoned, context, deadline, queue_, limits_.timeout);
    } catch (const Refusal&) {
      stop->store(true);
      throw;
    }
    task->done.get();
    const std::vector<std::string>& documents = shared->documents;
    std::string out = "{\"results\":[";
    for (std::size_t k = 0; k < chosen.size(); ++k)
      out += std::string(k ? "," : "") + "{\"model\":" + json(models_[chosen[k]].name).dump() +
             ",\"document\":" + documents[k] + "}";
    return {200, out + "]}"};
  });
}

}  // namespace attn::serve
