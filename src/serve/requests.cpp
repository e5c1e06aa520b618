#include "attn/serve/requests.h"

#include <stdexcept>

#include "attn/core/embed.h"

namespace attn::serve {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Both endpoints search as attn translate and attn attend do by default.
const decode::SearchOptions kSearch;

// ---------------------------------------------------------------- the tables
// Rows in the order they are checked (a later row's bound may name an earlier
// row); found by the readers through argument-dependent lookup.

template <class Visit>
void search_fields(decode::SearchOptions& s, Visit& field) {
  field({.name = "beam",
         .description = "the beam size (1: greedy search)",
         .minimum = Setting{1},
         .maximum = Setting{Limits{}.max_beam, "--max-beam"},
         .fallback = Setting{kSearch.beam}},
        s.beam);
  field({.name = "lenpen",
         .description = "the length penalty: a hypothesis scores Σ log p / length^lenpen",
         .minimum = Setting{0},
         .maximum = Setting{10},
         .fallback = Setting{kSearch.lenpen}},
        s.lenpen);
  field({.name = "max_len_a",
         .description = "an output has at most max_len_a × its source's subwords + max_len_b subwords",
         .minimum = Setting{0},
         .maximum = Setting{100},
         .fallback = Setting{kSearch.max_len_a}},
        s.max_len_a);
  field({.name = "max_len_b",
         .description = "see max_len_a",
         .minimum = Setting{0},
         .maximum = Setting{1000},
         .fallback = Setting{kSearch.max_len_b}},
        s.max_len_b);
}

template <class Visit>
void fields(TranslateRequest& r, Visit&& field) {
  field({.name = "models",
         .description = "the model that translates, by name (GET /v1/models): translate answers with one, attend "
                        "compares several; none: the one model loaded (required when several are)",
         .minimum = Setting{1},
         .maximum = Setting{1},
         .old_name = "model"},
        r.models);
  field({.name = "sentences",
         .description = "the lines to translate, one answer each (at most the server's --max-sentences: 413 beyond)",
         .required = true,
         .old_name = "sentence"},
        r.sentences);
  search_fields(r.search, field);
  field({.name = "nbest",
         .description = "how many of each line's best translations to return",
         .minimum = Setting{1},
         .maximum = Setting{kSearch.beam, "beam"},
         .fallback = Setting{kSearch.nbest}},
        r.search.nbest);
  field({.name = "split_sentences",
         .description = "translate each sentence of a line alone and join the translations, as attn translate "
                        "--split-sentences does (not with nbest above 1)",
         .fallback = Setting{false, "--split-sentences"}},
        r.split_sentences);
}

template <class Visit>
void fields(AttendRequest& r, Visit&& field) {
  field({.name = "models",
         .description = "the models whose maps are drawn, by name (GET /v1/models), each once, in the answer's order; "
                        "none: every model loaded",
         .minimum = Setting{1},
         .old_name = "model"},
        r.models);
  field({.name = "sentences",
         .description = "the line whose maps are drawn",
         .required = true,
         .minimum = Setting{1},
         .maximum = Setting{1},
         .old_name = "sentence"},
        r.sentences);
  search_fields(r.search, field);
  field({.name = "precision",
         .description = "the decimals of each weight",
         .minimum = Setting{1},
         .maximum = Setting{9},
         .fallback = Setting{4}},
        r.precision);
  field({.name = "split_sentences",
         .description = "one map per sentence of the line, labelled line and line_sentence",
         .fallback = Setting{false, "--split-sentences"}},
        r.split_sentences);
}

namespace {

// The schema's fixed part: its title, and the answers' definitions (checked
// against the server's answers by tests/serve/test_serve.cpp).
ATTN_EMBED(attn_serve_schema_base, "src/serve/serve_schema_base.json");

// The server flags a row's Setting may name.
json flag_value(const Limits& limits, std::string_view flag) {
  if (flag == "--max-beam") return limits.max_beam;
  if (flag == "--split-sentences") return limits.split_sentences;
  throw std::logic_error("serve: a request table names the unknown flag " + std::string(flag));
}

template <class Request>
Request read(const std::string& body, const Limits& limits) {
  const json request = parse_body(body);
  Request out;
  read_fields(request, out, [&](std::string_view flag) { return flag_value(limits, flag); });
  return out;
}

}  // namespace

TranslateRequest read_translate(const std::string& body, const Limits& limits) {
  return read<TranslateRequest>(body, limits);
}

AttendRequest read_attend(const std::string& body, const Limits& limits) { return read<AttendRequest>(body, limits); }

nlohmann::ordered_json serve_schema() {
  ordered_json schema = ordered_json::parse(ATTN_EMBEDDED(attn_serve_schema_base));
  schema["$defs"]["translate_request"] = schema_of<TranslateRequest>();
  schema["$defs"]["attend_request"] = schema_of<AttendRequest>();
  return schema;
}

}  // namespace attn::serve
