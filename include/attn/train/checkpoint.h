// Training checkpoints: a model file plus the optimizer moments (tensors
// "opt.m" and "opt.v", flat, in ParamStore order) and the training state
// (metadata "train_state", JSON), so a resumed run continues exactly.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "attn/core/rng.h"
#include "attn/model/model_file.h"
#include "attn/train/optimizer.h"

namespace attn::train {

struct TrainState {
  std::int64_t update = 0;          // optimizer updates done
  std::int64_t epoch = 1;           // the epoch in progress (1-based)
  std::int64_t batch_in_epoch = 0;  // batches of that epoch already consumed
  RngState rng;                     // dropout masks
  bool has_best = false;
  double best_metric = 0.0;  // best validation BLEU (or −loss), see TrainOptions::best_metric
  std::int64_t best_update = 0;
  std::int64_t bad_validations = 0;  // validations since the best (patience)
  double elapsed_s = 0.0;            // training wall time over all runs
  std::int64_t target_tokens = 0;    // seen so far
  double last_valid_bleu = -1.0, last_valid_loss = -1.0;
  nlohmann::json flags;  // the training flags of the run that wrote it (train/run_flags.h); null in older files

  nlohmann::json to_json() const;
  static TrainState from_json(const nlohmann::json& j);
};

// kind: "checkpoint" (with optimizer, resumable) or "model" (weights only).
void save_checkpoint(const std::filesystem::path& path, const model::Seq2Seq& model, const text::Bpe& bpe,
                     const TrainState& state, const Adam* optimizer);

// Reads the training state of a loaded file (Error if it has none).
TrainState read_train_state(const model::LoadedModel& loaded);
// Restores the optimizer moments (Error if the file is weights-only or of another shape).
void restore_optimizer(const model::LoadedModel& loaded, Adam& optimizer);

// The periodic checkpoints ckpt.<update>.attn in dir (--keep-last), oldest first.
std::vector<std::filesystem::path> periodic_checkpoints(const std::filesystem::path& dir);

}  // namespace attn::train
