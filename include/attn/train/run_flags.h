// The flags of a training run as its checkpoints keep them, so that a resume
// refuses a model other than the one the flags ask for and says which
// training flags changed.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/model/config.h"

namespace attn::train {

struct TrainOptions;

// A model-shaping flag the user typed, e.g. {"--dim", "dim", 64}; key is a
// model config key (model/config.h, mechanism options included) or
// "vocab_size" for the BPE's requested size.
struct GivenModelFlag {
  std::string flag, key;
  nlohmann::json value;
};

// Every value of a model config by key, mechanism options and attention
// dropout included (to_json leaves those out at their presets).
nlohmann::json every_value(const model::ModelConfig& config);

// The training flags of a run by flag name, e.g. {"--lr": 0.0005, "--vocab-size": 8000}.
nlohmann::json training_flags(const TrainOptions& options);

// Throws attn::Error naming `file` and every given flag whose value differs
// from the checkpoint's model (config) or its run's flags (`stored`, possibly
// null for checkpoints written before flags were kept).
void check_model_flags(const std::filesystem::path& file, const model::ModelConfig& config,
                       const nlohmann::json& stored, const std::vector<GivenModelFlag>& given);

// "--lr 0.0005 → 0.001, --max-updates 400 → 800", or "" when nothing changed
// (or `stored` is null).
std::string changed_training_flags(const nlohmann::json& stored, const nlohmann::json& now);

}  // namespace attn::train
