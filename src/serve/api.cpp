#include "attn/serve/api.h"

#include <algorithm>
#include <filesystem>

#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/decode/maps.h"
#include "attn/serve/requests.h"
#include "attn/text/sentence_split.h"

namespace attn::serve {

namespace {

using json = nlohmann::json;

std::string loaded_names(const std::vector<ServedModel>& models) {
  std::string list;
  for (const ServedModel& m : models) list += (list.empty() ? "" : ", ") + m.name;
  return list;
}

// The loaded models a request names, in its order, each once.
std::vector<std::size_t> named_models(const std::vector<std::string>& names, const std::vector<ServedModel>& models) {
  if (names.size() > models.size())
    throw Refusal{400, "\"models\" lists " + std::to_string(names.size()) + " names; " + std::to_string(models.size()) +
                           " models are loaded, each may be named once: " + loaded_names(models)};
  std::vector<std::size_t> chosen;
  for (const std::string& name : names) {
    const auto found = std::find_if(models.begin(), models.end(), [&](const ServedModel& m) { return m.name == name; });
    if (found == models.end())
      throw Refusal{404, "no model named " + json(name).dump() + "; the loaded models are " + loaded_names(models) +
                             " (GET /v1/models)"};
    const auto m = static_cast<std::size_t>(found - models.begin());
    if (std::find(chosen.begin(), chosen.end(), m) != chosen.end())
      throw Refusal{400, "\"models\" names " + json(name).dump() + " twice; name each model once"};
    chosen.push_back(m);
  }
  return chosen;
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

// The units decoded: the lines, or with split_sentences the sentences within
// each; more than --max-sentences either way is 413.
text::SentenceUnits units_within(const std::vector<std::string>& lines, bool split, const Limits& limits) {
  const auto over = [&](std::size_t n, const std::string& what) {
    if (static_cast<std::int64_t>(n) > limits.max_sentences)
      throw Refusal{413, what + " " + std::to_string(n) + " sentences; the limit is " +
                             std::to_string(limits.max_sentences) + " per request (--max-sentences); split it"};
  };
  over(lines.size(), "the request holds");
  text::SentenceUnits units = text::sentence_units(lines, split);
  over(units.texts.size(), lines.size() == 1 ? "the line holds" : "the request's lines hold");
  return units;
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

// The best translations of each unit; an empty unit translates to nothing and is not queued.
std::vector<Hypotheses> decode_units(DecodeQueue& queue, std::size_t model,
                                     const std::vector<std::vector<std::int32_t>>& ids,
                                     const decode::SearchOptions& search, const RequestContext& context,
                                     std::chrono::steady_clock::time_point deadline, const Limits& limits) {
  std::vector<std::vector<std::int32_t>> queued;
  std::vector<std::size_t> queued_unit;
  for (std::size_t u = 0; u < ids.size(); ++u)
    if (!ids[u].empty()) {
      queued.push_back(ids[u]);
      queued_unit.push_back(u);
    }
  std::vector<Hypotheses> found(ids.size());
  if (queued.empty()) return found;
  std::optional<DecodeQueue::Submitted> job = queue.translate(model, std::move(queued), search, context.client);
  if (!job) throw queue_full(queue);
  wait_for(job->result, job->abandoned, context, deadline, queue, limits.timeout);
  std::vector<Hypotheses> decoded = job->result.get();
  for (std::size_t k = 0; k < decoded.size(); ++k) found[queued_unit[k]] = std::move(decoded[k]);
  return found;
}

// One entry per line: its units' best translations joined, their mean score,
// and with nbest each unit's n best.
json translations_of(const text::Bpe& bpe, const TranslateRequest& request, const text::SentenceUnits& units,
                     const std::vector<Hypotheses>& found) {
  const bool nbest = request.search.nbest > 1;
  json translations = json::array();
  for (std::size_t i = 0, u = 0; i < request.sentences.size(); ++i) {
    std::string text;
    double score_sum = 0;
    std::int64_t parts = 0;
    json hypotheses = json::array();
    for (; u < units.texts.size() && units.places[u].line == static_cast<std::int64_t>(i); ++u) {
      if (found[u].empty()) continue;  // an empty unit
      if (!text.empty()) text += ' ';
      text += bpe.decode_line(found[u][0].tokens);
      score_sum += found[u][0].score;
      ++parts;
      if (nbest)
        for (const decode::Hypothesis& h : found[u])
          hypotheses.push_back({{"text", bpe.decode_line(h.tokens)}, {"score", h.score}});
    }
    json entry{{"text", text}, {"score", parts ? score_sum / static_cast<double>(parts) : 0.0}};
    if (request.split_sentences) entry["sentences"] = parts;
    if (nbest) entry["nbest"] = hypotheses;
    translations.push_back(entry);
  }
  return translations;
}

// The document attn attend writes for these units with this model, as one JSON text.
std::string attend_document(const ServedModel& served, const text::SentenceUnits& units,
                            const std::vector<std::vector<std::int32_t>>& sources, const decode::SearchOptions& search,
                            const decode::MapsSelection& selection, bool split, const Limits& limits) {
  model::Seq2Seq& model = *served.loaded.model;
  thread_local Arena arena;
  arena.reset();
  Rng rng(0);
  nn::StepContext ctx{model.params(), arena, rng, false};
  decode::AttendInput input;
  input.source_lines = &units.texts;
  input.sources = &sources;
  if (split) input.places = &units.places;
  std::string sentences;
  decode::run_attend(ctx, model, served.loaded.bpe, input, search, selection,
                     [&](std::int64_t, const std::string& s) { sentences += (sentences.empty() ? "" : ",") + s; });
  std::string head = decode::maps_header(model, shown_file(served, limits), false, search, selection)
                         .dump(-1, ' ', false, json::error_handler_t::replace);
  head.pop_back();  // the closing brace
  return head + ",\"sentences\":[" + sentences + "]}";
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
    const TranslateRequest request = read_translate(body, limits_);
    const std::vector<std::size_t> named = named_models(request.models, models_);
    if (named.empty() && models_.size() > 1)
      throw Refusal{400,
                    "several models are loaded; name one with \"models\": [\"NAME\"], one of " + loaded_names(models_)};
    if (request.split_sentences && request.search.nbest > 1)
      throw Refusal{
          400, "\"split_sentences\" joins each line's best translations; it cannot be used with \"nbest\" above 1"};
    const std::size_t which = named.empty() ? 0 : named.front();
    const ServedModel& served = models_[which];
    const text::SentenceUnits units = units_within(request.sentences, request.split_sentences, limits_);
    const std::vector<std::vector<std::int32_t>> ids = encode_units(served, units, request.split_sentences, limits_);
    check_work(search_work(request.search, ids, served.loaded.model->config().max_positions), limits_);
    const std::vector<Hypotheses> found = decode_units(queue_, which, ids, request.search, context, deadline, limits_);
    return {200,
            json{{"model", served.name}, {"translations", translations_of(served.loaded.bpe, request, units, found)}}
                .dump(-1, ' ', false, json::error_handler_t::replace)};
  });
}

Response Api::attend(const std::string& body, const RequestContext& context) {
  const auto deadline = context.deadline.value_or(std::chrono::steady_clock::now() + limits_.timeout);
  return answer([&]() -> Response {
    if (closed_) throw Refusal{503, "the server is shutting down; retry on another instance"};
    const AttendRequest request = read_attend(body, limits_);
    std::vector<std::size_t> chosen = named_models(request.models, models_);
    if (chosen.empty())
      for (std::size_t i = 0; i < models_.size(); ++i) chosen.push_back(i);
    const bool split = request.split_sentences;
    decode::MapsSelection selection;
    selection.precision = request.precision;
    // What the decoder thread works on; shared, as a request that times out
    // returns while its work may still be running.
    struct AttendWork {
      text::SentenceUnits units;
      std::vector<std::vector<std::vector<std::int32_t>>> sources;  // [model][unit]
      std::vector<std::string> documents;                           // [model]
    };
    auto shared = std::make_shared<AttendWork>();
    shared->units = units_within(request.sentences, split, limits_);
    std::int64_t work = 0;
    for (std::size_t m : chosen) {
      shared->sources.push_back(encode_units(models_[m], shared->units, split, limits_));
      work += search_work(request.search, shared->sources.back(), models_[m].loaded.model->config().max_positions);
    }
    check_work(work, limits_);
    shared->documents.resize(chosen.size());
    // The maps' search stops when the request is given up on.
    auto stop = std::make_shared<std::atomic<bool>>(false);
    decode::SearchOptions search = request.search;
    search.stop = [stop, &queue = queue_] { return stop->load() || queue.cancelled(); };
    const auto run = [shared, chosen, search, selection, split, &models = models_, limits = limits_] {
      for (std::size_t k = 0; k < chosen.size(); ++k)
        shared->documents[k] =
            attend_document(models[chosen[k]], shared->units, shared->sources[k], search, selection, split, limits);
    };
    std::optional<DecodeQueue::SubmittedTask> task =
        queue_.run(static_cast<std::int64_t>(shared->units.texts.size() * chosen.size()), run, context.client);
    if (!task) throw queue_full(queue_);
    try {
      wait_for(task->done, task->abandoned, context, deadline, queue_, limits_.timeout);
    } catch (const Refusal&) {
      stop->store(true);
      throw;
    }
    task->done.get();
    std::string out = "{\"results\":[";
    for (std::size_t k = 0; k < chosen.size(); ++k)
      out += std::string(k ? "," : "") + "{\"model\":" + json(models_[chosen[k]].name).dump() +
             ",\"document\":" + shared->documents[k] + "}";
    return {200, out + "]}"};
  });
}

}  // namespace attn::serve
