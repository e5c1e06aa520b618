// Attention maps for `attn attend`: which maps to show (components, layers,
// heads), the translation or forced target they belong to, and their JSON
// (docs/attention-json.md, schema docs/attention.schema.json).
//
// How a sentence's maps are made: without a target, beam (or greedy) search
// picks the hypothesis; then one teacher-forced forward over (source, that
// hypothesis) records every layer's weights. Incremental decoding equals the
// teacher-forced forward (tests/model/test_seq2seq.cpp), so these are exactly
// the weights that produced the printed output, and a forced run on the same
// tokens gives the same maps. With a target, the forced forward runs on it.
//
// Streaming: run_attend works in chunks of sentences and hands each
// sentence's JSON text to a sink, so a file of any length is processed with
// one chunk's maps in memory.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/context.h"
#include "attn/nn/map_json.h"
#include "attn/text/bpe.h"
#include "attn/text/sentence_split.h"

namespace attn::decode {

inline constexpr const char* kMapsFormat = "attn-attention";
inline constexpr int kMapsFormatVersion = 1;

enum class MapComponent { encoder, decoder, cross };
// "encoder" | "decoder" | "cross"
const char* component_name(MapComponent c);

// What to show.
struct MapsSelection {
  std::vector<MapComponent> components{MapComponent::encoder, MapComponent::decoder, MapComponent::cross};
  std::vector<std::int64_t> layers;  // empty: every layer of each component
  std::vector<std::int64_t> heads;   // empty: every head
  int precision = 4;                 // decimals of every weight
};

// --components: "encoder,decoder,cross" (any subset, any order) or "all".
// Returns them in that canonical order; throws Error naming the flag.
std::vector<MapComponent> parse_components(const std::string& text);
// --layers / --heads: "all" (→ empty) or comma-separated indices and ranges
// ("0,2", "1-3"), returned sorted and unique; throws Error naming `flag`.
// The range is checked by check_selection, which knows the model.
std::vector<std::int64_t> parse_indices(const std::string& text, const std::string& flag);
// Checks the selection against a model: every chosen layer exists in every
// chosen component, heads < H, 1 ≤ precision ≤ 9. Throws Error naming the flag.
void check_selection(const MapsSelection& selection, const model::ModelConfig& config);

using nn::round_preserving_sum;  // (nn/map_json.h) the rounding every map row goes through

// One sentence's result: the tokens, the score and the maps.
struct AttendedSentence {
  std::vector<std::int32_t> source;  // subword ids, no specials
  std::vector<std::int32_t> target;  // hypothesis or forced target, no specials (</s> implied)
  std::optional<double> score;       // logprob / (|target| + 1)^lenpen; none for an empty source
  std::optional<double> logprob;     // Σ log p over target and </s>
  model::SentenceMaps maps;          // empty for an empty source
};

// A chunk of sentences. targets == nullptr: decode with search (beam 1 =
// greedy); otherwise score and show the given targets (forced mode). Empty
// sources are not run through the model (as in translate). ctx.arena is reset.
// score_targets false: forced mode leaves score and logprob empty (attn
// attn-stats needs only the maps, and scoring costs an output layer).
std::vector<AttendedSentence> attend_chunk(nn::StepContext& ctx, const model::Seq2Seq& model,
                                           const std::vector<std::vector<std::int32_t>>& sources,
                                           const std::vector<std::vector<std::int32_t>>* targets,
                                           const SearchOptions& search, bool score_targets = true);

// The document's fields besides "sentences" (format, version, model, mode, …).
nlohmann::json maps_header(const model::Seq2Seq& model, const std::string& model_file, bool forced,
                           const SearchOptions& search, const MapsSelection& selection);

// Where a sentence split from a line (--split-sentences) came from (text/sentence_split.h).
using LinePlace = text::LinePlace;

// One sentence as compact JSON text (one line): index, texts, tokens, score
// and the selected components with their extras, rounded; with `place`, also
// "line" and "line_sentence".
std::string sentence_json(const AttendedSentence& sentence, std::int64_t index, const std::string& source_line,
                          const std::string& translation, const text::Bpe& bpe, const model::Seq2Seq& model,
                          const MapsSelection& selection, const LinePlace* place = nullptr);

// Runs every sentence in chunks of `chunk` and calls sink(index, json) in
// input order, holding one chunk's maps at a time. The translation shown for
// a sentence is its target line in forced mode, else the detokenized output.
struct AttendInput {
  const std::vector<std::string>* source_lines = nullptr;
  const std::vector<std::vector<std::int32_t>>* sources = nullptr;  // source_lines encoded
  const std::vector<std::string>* target_lines = nullptr;           // forced mode when set
  const std::vector<std::vector<std::int32_t>>* targets = nullptr;  // target_lines encoded
  const std::vector<LinePlace>* places = nullptr;  // with --split-sentences: each source's line and place
  std::int64_t chunk = 16;
};
void run_attend(nn::StepContext& ctx, const model::Seq2Seq& model, const text::Bpe& bpe, const AttendInput& input,
                const SearchOptions& search, const MapsSelection& selection,
                const std::function<void(std::int64_t, const std::string&)>& sink);

// Writes the JSON outputs as sentences arrive: a document {header…,
// "sentences": [...]} or JSON Lines, one complete document per sentence.
class MapsJsonWriter {
 public:
  MapsJsonWriter(std::FILE* out, const nlohmann::json& header, bool jsonl);
  void add(const std::string& sentence);
  void finish();

 private:
  std::FILE* out_;
  std::string head_;  // the header object without its closing brace, then ,"sentences":[
  bool jsonl_, first_ = true;
};

}  // namespace attn::decode
