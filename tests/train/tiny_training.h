// The tiny corpus's model trained through the library (tests of the trainer).
#pragma once
#include <filesystem>
#include <vector>

#include "attn/model/model_file.h"
#include "attn/cli/greedy_validation.h"
#include "attn/train/trainer.h"

namespace attn::test {

// Trainer options for a tiny model on dir/train.* and dir/valid.* (the
// library's view of tiny_train_args), quiet, seed 7.
inline train::TrainOptions tiny_train_options(const std::filesystem::path& dir) {
  train::TrainOptions o;
  o.train_src = dir / "train.src";
  o.train_tgt = dir / "train.tgt";
  o.valid_src = dir / "valid.src";
  o.valid_tgt = dir / "valid.tgt";
  o.model.dim = 16;
  o.model.ffn_dim = 32;
  o.model.heads = 2;
  o.model.enc_layers = 1;
  o.model.dec_layers = 1;
  o.model.dropout = 0.1f;
  o.vocab_size = 300;
  o.max_tokens = 64;
  o.optimizer.lr = 3e-3f;
  o.optimizer.warmup = 5;
  o.quiet = true;
  o.seed = 7;
  o.precision = kernels::ComputeType::fp32;
  return o;
}

// A Trainer session with attn train's validation translator (greedy search).
inline train::TrainResult train_session(const train::TrainOptions& o, train::TrainHooks* hooks = nullptr) {
  return train::Trainer(o, cli::greedy_validation_translator(), hooks).train();
}

// Every parameter of a model file, in order.
inline std::vector<float> model_weights(const std::filesystem::path& file) {
  const auto loaded = model::load_model_values(file);
  const auto v = loaded.model->params().values();
  return {v.begin(), v.end()};
}

// The test seams: stop after N updates of a session; NaN losses on some update attempts.
struct TestHooks final : train::TrainHooks {
  std::int64_t stop_after = 0, poison_from = 0, poison_count = 0;
  bool stop(std::int64_t updates_this_session) override { return stop_after > 0 && updates_this_session >= stop_after; }
  bool poison(std::int64_t attempt) override { return attempt >= poison_from && attempt < poison_from + poison_count; }
};

}  // namespace attn::test
