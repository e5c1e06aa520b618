// The training loop: data, BPE, model, Adam, validation with BLEU, early
// stopping, checkpoints (last, best, --keep-last), exact resume, and a clean
// stop on SIGINT/SIGTERM.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "attn/model/config.h"
#include "attn/train/optimizer.h"

namespace attn::train {

struct TrainOptions {
  std::filesystem::path train_src, train_tgt, valid_src, valid_tgt;
  std::filesystem::path save_dir = "runs/default";
  std::filesystem::path log_json;   // empty: none
  std::filesystem::path resume;     // empty: save_dir/last.attn when it exists
  model::ModelConfig model;         // preset + overrides (ignored on resume)
  std::int64_t vocab_size = 8000;
  std::int64_t max_len = 256;       // subwords per side; longer pairs are skipped
  std::int64_t max_tokens = 4096;
  std::int64_t update_freq = 1;
  std::int64_t max_epochs = 0;      // 0: no limit
  std::int64_t max_updates = 0;
  double max_time_s = 0.0;
  std::int64_t valid_every = 0;     // updates; 0: at the end of each epoch
  std::int64_t patience = 0;        // validations without improvement; 0: off
  std::string best_metric = "bleu"; // "bleu" | "loss"
  std::int64_t keep_last = 0;       // periodic checkpoints kept besides last and best
  std::int64_t log_every = 100;     // updates between plain log lines
  float label_smoothing = 0.1f;
  std::uint64_t seed = 1;
  OptimizerOptions optimizer;
  bool quiet = false;
  // Updates whose loss or gradient is NaN/Inf that are skipped (batches
  // consumed, no optimizer step) before training stops with an error. The
  // count starts again at 0 in each run (a resume).
  std::int64_t skip_bad_batches = 0;
  // For tests: the update attempts [poison_from, poison_from + poison_count)
  // of this run (counted from 1, skipped ones included) get a NaN loss.
  std::int64_t poison_from = 0, poison_count = 0;
  // For tests: stop (as on SIGINT) after this many updates in this run; 0: never.
  std::int64_t stop_after_updates = 0;
  // For the tests that send real signals (hidden flag --test-pause-at):
  // "update:N" or "valid:N" pauses there, writes SAVE_DIR/paused and waits
  // for SIGINT/SIGTERM (at most 60 s). Empty: never.
  std::string test_pause_at;
};

struct TrainResult {
  std::int64_t updates = 0, epochs_done = 0;
  bool interrupted = false;
  int signal = 0;  // SIGINT or SIGTERM when a signal stopped the run
  double best_metric = 0.0;
  std::filesystem::path last, best;
};

TrainResult run_training(const TrainOptions& options);

}  // namespace attn::train
