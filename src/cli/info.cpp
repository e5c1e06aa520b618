// attn info: what a model file holds.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attn/cli/commands.h"
#include "attn/model/model_file.h"
#include "attn/train/checkpoint.h"

namespace attn::cli {

namespace {

int run(const std::string& path, bool as_json) {
  const model::LoadedModel loaded = model::load_model_values(path);
  const auto& meta = loaded.file.metadata();
  nlohmann::json j;
  j["file"] = path;
  j["kind"] = meta.count("kind") ? meta.at("kind") : "model";
  j["config"] = loaded.model->config().to_json();
  j["parameters"] = loaded.model->parameter_count();
  j["vocab_size"] = loaded.bpe.vocab().size();
  j["weights"] = loaded.int8_params > 0 ? "int8" : "fp32";
  if (meta.count("quantized_from")) j["quantized_from"] = meta.at("quantized_from");
  if (meta.count("train_state")) j["train_state"] = train::read_train_state(loaded).to_json();
  if (as_json) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("file        %s (%s)\n", path.c_str(), j["kind"].get<std::string>().c_str());
  std::printf("parameters  %ld\n", static_cast<long>(loaded.model->parameter_count()));
  std::printf("vocabulary  %d BPE pieces (joint)\n", loaded.bpe.vocab().size());
  if (loaded.int8_params > 0)
    std::printf("weights     int8: %ld weight matrices (attn quantize%s%s), the rest FP32\n",
                static_cast<long>(loaded.int8_params), meta.count("quantized_from") ? " of " : "",
                meta.count("quantized_from") ? meta.at("quantized_from").c_str() : "");
  std::printf("config      %s\n", j["config"].dump().c_str());
  if (j.contains("train_state")) {
    const auto& s = j["train_state"];
    std::printf("training    update %ld, epoch %ld, %.0f s, %ld target tokens\n", s["update"].get<long>(),
                s["epoch"].get<long>(), s["elapsed_s"].get<double>(), s["target_tokens"].get<long>());
    if (s["has_best"].get<bool>()) {
      // best_metric is what --best-metric chose, higher is better (a loss is stored negated); with
      // --join-pairs K > 1, the mean over the single and the joined validation set.
      const nlohmann::json flags = s.contains("flags") && s["flags"].is_object() ? s["flags"]
                                                                                 : nlohmann::json::object();
      const bool by_loss = flags.value("--best-metric", std::string("bleu")) == "loss";
      const long pairs = flags.value("--join-pairs", 1L);
      const double metric = s["best_metric"].get<double>();
      const std::string what = (pairs > 1 ? "mean valid " : "valid ") + std::string(by_loss ? "loss" : "BLEU") +
                               (pairs > 1 ? " (single, ×" + std::to_string(pairs) + ")" : "");
      std::printf("best        %s %.4f at update %ld (last valid BLEU %.2f, loss %.4f)\n", what.c_str(),
                  by_loss ? -metric : metric, s["best_update"].get<long>(), s["last_valid_bleu"].get<double>(),
                  s["last_valid_loss"].get<double>());
    }
  }
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("info", "Print a model file's config, size and training state");
  add_common_options(*sub, common);
  sub->add_option("model", *path, "model file (.attn)")->required();
  sub->add_flag("--json", *as_json, "print JSON");
  sub->callback([&action, path, as_json] { action = [path, as_json] { return run(*path, *as_json); }; });
}

}  // namespace attn::cli
