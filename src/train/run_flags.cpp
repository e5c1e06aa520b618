#include "attn/train/run_flags.h"

#include <algorithm>
#include <cstdio>

#include "attn/core/error.h"
#include "attn/model/presets.h"
#include "attn/train/trainer.h"

namespace attn::train {

namespace {

// 0.3 for a float stored as 0.30000001192092896: values as a user types them.
std::string shown(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_number_float()) return v.dump();
  char text[32];
  std::snprintf(text, sizeof text, "%g", v.get<double>());
  return text;
}

}  // namespace

nlohmann::json every_value(const model::ModelConfig& config) {
  nlohmann::json j = config.to_json();
  j.update(config.options);
  j["attention_dropout"] = config.attention_dropout;
  return j;
}

nlohmann::json training_flags(const TrainOptions& o) {
  return {{"--vocab-size", o.vocab_size},
          {"--max-len", o.max_len},
          {"--join-pairs", o.join_pairs},
          {"--drop-final-stop", o.drop_final_stop},
          {"--max-tokens", o.max_tokens},
          {"--update-freq", o.update_freq},
          {"--max-epochs", o.max_epochs},
          {"--max-updates", o.max_updates},
          {"--max-time", o.max_time_s / 60.0},
          {"--valid-every", o.valid_every},
          {"--patience", o.patience},
          {"--best-metric", std::string(best_metric_name(o.best_metric))},
          {"--keep-last", o.keep_last},
          {"--label-smoothing", o.label_smoothing},
          {"--precision", std::string(kernels::compute_type_name(o.precision.value()))},
          {"--seed", o.seed},
          {"--lr", o.optimizer.lr},
          {"--warmup", o.optimizer.warmup},
          {"--clip-norm", o.optimizer.clip_norm},
          {"--weight-decay", o.optimizer.weight_decay}};
}

void check_model_flags(const std::filesystem::path& file, const model::ModelConfig& config,
                       const nlohmann::json& stored, const std::vector<GivenModelFlag>& given) {
  const nlohmann::json held = every_value(config);
  // A flag that sets several keys (--layers: encoder and decoder) is named
  // once, with the checkpoint's values it differs from.
  std::vector<std::pair<std::string, std::vector<std::string>>> differing;  // "--layers 2", {"3"}
  for (const GivenModelFlag& g : given) {
    nlohmann::json was;
    if (g.key == "vocab_size") {
      if (!stored.is_object() || !stored.contains("--vocab-size")) continue;  // an older checkpoint: unknown
      was = stored["--vocab-size"];
    } else {
      was = held.value(g.key, nlohmann::json());
    }
    if (was == g.value) continue;
    // An empty decoder mixer is the arch's own: say which one.
    const std::string held_text = g.key == "decoder_mixer" && was == ""
                                      ? std::string(model::find_preset(config.arch).decoder) + ", the " + config.arch +
                                            " arch's own"
                                      : shown(was);
    const std::string typed = g.flag + " " + shown(g.value);
    auto it = std::find_if(differing.begin(), differing.end(), [&](const auto& d) { return d.first == typed; });
    if (it == differing.end()) it = differing.insert(differing.end(), {typed, {}});
    if (std::find(it->second.begin(), it->second.end(), held_text) == it->second.end()) it->second.push_back(held_text);
  }
  std::string differences;
  for (const auto& [typed, held_values] : differing) {
    std::string values;
    for (const std::string& v : held_values) values += (values.empty() ? "" : " and ") + v;
    differences += (differences.empty() ? "" : ", ") + typed + " (the checkpoint: " + values + ")";
  }
  if (!differences.empty())
    throw Error(file.string() + " holds a model trained with other model flags: " + differences +
                "; resume with the checkpoint's values, or train a new model with another --save-dir");
}

std::string changed_training_flags(const nlohmann::json& stored, const nlohmann::json& now) {
  if (!stored.is_object()) return "";
  std::string changes;
  for (const auto& [flag, value] : now.items()) {
    if (flag == "--vocab-size" || !stored.contains(flag) || stored[flag] == value) continue;
    changes += (changes.empty() ? "" : ", ") + flag + " " + shown(stored[flag]) + " → " + shown(value);
  }
  return changes;
}

}  // namespace attn::train
