// The requests of `attn serve`'s JSON API as typed structs, each read from its
// table of fields (requests.cpp; request_fields.h says how a table reads a
// body and writes its schema). What a table cannot know is checked by the API
// (api.cpp): model names against the loaded models, the sizes that answer 413.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/decode/search.h"
#include "attn/serve/limits.h"
#include "attn/serve/request_fields.h"

namespace attn::serve {

struct TranslateRequest {
  std::vector<std::string> models;     // none: the one model loaded
  std::vector<std::string> sentences;  // the lines
  decode::SearchOptions search;        // beam, lenpen, max_len_a, max_len_b, nbest
  bool split_sentences = false;
};

struct AttendRequest {
  std::vector<std::string> models;     // none: every model loaded
  std::vector<std::string> sentences;  // one line
  decode::SearchOptions search;        // beam, lenpen, max_len_a, max_len_b
  bool split_sentences = false;
  int precision = 4;
};

// The body read by its table; throws Refusal (400) naming the first field it breaks.
TranslateRequest read_translate(const std::string& body, const Limits& limits);
AttendRequest read_attend(const std::string& body, const Limits& limits);

// docs/serve.schema.json: the requests' definitions written by their tables
// into src/serve/serve_schema_base.json (the answers'). A test compares the
// committed file with it.
nlohmann::ordered_json serve_schema();

}  // namespace attn::serve
