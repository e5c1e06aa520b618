#include "attn/train/checkpoint.h"

#include <algorithm>
#include <regex>

#include <vector>

#include "attn/core/error.h"

namespace attn::train {

nlohmann::json TrainState::to_json() const {
  return {{"update", update},
          {"epoch", epoch},
          {"batch_in_epoch", batch_in_epoch},
          {"rng", {{"seed", rng.seed}, {"counter", rng.counter}, {"word", rng.word}}},
          {"has_best", has_best},
          {"best_metric", best_metric},
          {"best_update", best_update},
          {"bad_validations", bad_validations},
          {"elapsed_s", elapsed_s},
          {"target_tokens", target_tokens},
          {"last_valid_bleu", last_valid_bleu},
          {"last_valid_loss", last_valid_loss},
          {"flags", flags}};
}

TrainState TrainState::from_json(const nlohmann::json& j) {
  TrainState s;
  try {
    s.update = j.at("update").get<std::int64_t>();
    s.epoch = j.at("epoch").get<std::int64_t>();
    s.batch_in_epoch = j.at("batch_in_epoch").get<std::int64_t>();
    s.rng.seed = j.at("rng").at("seed").get<std::uint64_t>();
    s.rng.counter = j.at("rng").at("counter").get<std::uint64_t>();
    s.rng.word = j.at("rng").at("word").get<std::uint32_t>();
    s.has_best = j.at("has_best").get<bool>();
    s.best_metric = j.at("best_metric").get<double>();
    s.best_update = j.at("best_update").get<std::int64_t>();
    s.bad_validations = j.at("bad_validations").get<std::int64_t>();
    s.elapsed_s = j.at("elapsed_s").get<double>();
    s.target_tokens = j.at("target_tokens").get<std::int64_t>();
    s.last_valid_bleu = j.value("last_valid_bleu", -1.0);
    s.last_valid_loss = j.value("last_valid_loss", -1.0);
    s.flags = j.value("flags", nlohmann::json());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("damaged training state (") + e.what() + ")");
  }
  return s;
}

void save_checkpoint(const std::filesystem::path& path, const model::Seq2Seq& model, const text::Bpe& bpe,
                     const TrainState& state, const Adam* optimizer) {
  std::vector<TensorRef> extra;
  if (optimizer) {
    const Shape flat{optimizer->first_moment().numel()};
    extra.push_back({"opt.m", flat, optimizer->first_moment().span()});
    extra.push_back({"opt.v", flat, optimizer->second_moment().span()});
  }
  model::save_model_file(path, model, bpe, extra,
                         {{"kind", optimizer ? "checkpoint" : "model"},
                          {"train_state", state.to_json().dump()},
                          {"optimizer_updates", std::to_string(optimizer ? optimizer->updates() : 0)}});
}

TrainState read_train_state(const model::LoadedModel& loaded) {
  auto it = loaded.file.metadata().find("train_state");
  if (it == loaded.file.metadata().end())
    throw Error(loaded.file.path().string() + ": has no training state; it cannot be resumed");
  try {
    return TrainState::from_json(nlohmann::json::parse(it->second));
  } catch (const nlohmann::json::exception& e) {
    throw Error(loaded.file.path().string() + ": damaged training state (" + e.what() + ")");
  } catch (const Error& e) {
    throw Error(loaded.file.path().string() + ": " + e.what());
  }
}

void restore_optimizer(const model::LoadedModel& loaded, Adam& optimizer) {
  const std::string& path = loaded.file.path().string();
  if (!loaded.file.contains("opt.m") || !loaded.file.contains("opt.v"))
    throw Error(path + ": holds model weights only (no optimizer state); resume from last.attn instead");
  const Shape flat{optimizer.first_moment().numel()};
  loaded.file.copy_to("opt.m", flat, optimizer.first_moment().span());
  loaded.file.copy_to("opt.v", flat, optimizer.second_moment().span());
  optimizer.set_updates(std::stoll(loaded.file.metadata().at("optimizer_updates")));
}

std::vector<std::filesystem::path> periodic_checkpoints(const std::filesystem::path& dir) {
  static const std::regex pattern(R"(ckpt\.(\d+)\.attn)");
  std::vector<std::pair<std::int64_t, std::filesystem::path>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoll(m[1].str()), entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

}  // namespace attn::train
