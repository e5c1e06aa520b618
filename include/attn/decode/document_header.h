// The fields both attention documents open with — attn attend's maps
// (decode/maps.h) and attn attn-stats' statistics (decode/attention_stats.h) —
// so the two describe a model and a run in the same words.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"

namespace attn::decode {

// format, version, attn_version, model (file, config, encoder and decoder
// mixers) and mode ("forced", "greedy" or "beam"); the caller adds the rest.
nlohmann::json document_header(const char* format, int version, const model::Seq2Seq& model,
                               const std::string& model_file, bool forced, const SearchOptions& search);

}  // namespace attn::decode
