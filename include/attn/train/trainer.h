// The training loop: data, BPE, model, Adam, validation with BLEU, early
// stopping, checkpoints (last, best, --keep-last), exact resume, and a clean
// stop on SIGINT, SIGTERM or SIGHUP (core/stop_signals.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/kernels/products.h"
#include "attn/model/config.h"
#include "attn/train/optimizer.h"
#include "attn/train/run_flags.h"
#include "attn/train/validation_translator.h"

namespace attn::train {

// What picks best.attn and early stopping: validation BLEU, or validation loss.
enum class BestMetric { bleu, loss };
// "bleu", "loss": the text of --best-metric and of the checkpoints' training flags.
std::string_view best_metric_name(BestMetric metric);
// nullopt for any other text.
std::optional<BestMetric> parse_best_metric(std::string_view text);

struct TrainOptions {
  std::filesystem::path train_src, train_tgt, valid_src, valid_tgt;
  std::filesystem::path save_dir = "runs/default";
  std::filesystem::path log_json;  // empty: none
  std::filesystem::path resume;    // empty: save_dir/last.attn when it exists
  model::ModelConfig model;        // preset + overrides (ignored on resume)
  // Whether --arch was typed: only a typed arch that differs from a resumed
  // checkpoint's is refused; otherwise the checkpoint's arch is the run's.
  bool arch_given = true;
  // The model flags typed, which a resumed checkpoint must match (train/run_flags.h).
  std::vector<GivenModelFlag> model_flags_given;
  std::int64_t vocab_size = 8000;
  std::int64_t max_len = 256;  // subwords per side; longer pairs are skipped
  // Each training example joins 1…join_pairs consecutive pairs (train/joined_pairs.h);
  // above 1, validation also scores the validation set joined join_pairs at a time.
  std::int64_t join_pairs = 1;
  // The share of examples whose source loses its final stop (train/joined_pairs.h).
  double drop_final_stop = 0.0;
  std::int64_t max_tokens = 4096;
  std::int64_t update_freq = 1;
  std::int64_t max_epochs = 0;  // 0: no limit
  std::int64_t max_updates = 0;
  double max_time_s = 0.0;
  std::int64_t valid_every = 0;               // updates; 0: at the end of each epoch
  std::int64_t patience = 0;                  // validations without improvement; 0: off
  BestMetric best_metric = BestMetric::bleu;  // with join_pairs > 1 the mean over single and joined
  std::int64_t keep_last = 0;                 // periodic checkpoints kept besides last and best
  std::int64_t log_every = 100;               // updates between plain log lines
  float label_smoothing = 0.1f;
  // fp32 or bf16: the matrix products of the forward and backward passes
  // (the model's compute type, kernels/products.h); weights, gradients, the optimizer, LayerNorm,
  // softmax and the loss stay FP32, and so does the model file.
  // Required (std::invalid_argument without it): no session runs FP32 for want of an argument.
  std::optional<kernels::ComputeType> precision;
  std::uint64_t seed = 1;
  OptimizerOptions optimizer;
  bool quiet = false;
  // Updates whose loss or gradient is NaN/Inf that are skipped (batches
  // consumed, no optimizer step) before training stops with an error. The
  // count starts again at 0 in each session (a resume starts one).
  std::int64_t skip_bad_batches = 0;
};

struct TrainResult {
  std::int64_t updates = 0, epochs_done = 0;
  bool interrupted = false;
  int signal = 0;  // the stop signal (SIGINT, SIGTERM, SIGHUP) that stopped the session
  double best_metric = 0.0;
  std::filesystem::path last, best;
};

// Where a test can step into a run; production passes none. Every hook has
// a do-nothing default.
class TrainHooks {
 public:
  virtual ~TrainHooks() = default;
  // Before the update that follows `update`, and as the validation after `update` begins.
  virtual void before_update(std::int64_t /*update*/) {}
  virtual void before_validation(std::int64_t /*update*/) {}
  // True: stop as on SIGINT before the next update (updates done in this session so far).
  virtual bool stop(std::int64_t /*updates_this_session*/) { return false; }
  // True: this update attempt of this session (counted from 1, skipped ones
  // included) gets a NaN loss.
  virtual bool poison(std::int64_t /*attempt*/) { return false; }
};

// A session of a training run (the first, or a resume) in named steps: open()
// reads the data and resumes or starts the model; then update() after update()
// — validate() at the end of each epoch (or every --valid-every updates), which
// also writes the checkpoints — until a limit, early stopping or a signal;
// finish() logs the end. train() is that whole session. Validation BLEU scores
// what `translator` makes of the validation sources.
class Trainer {
 public:
  Trainer(TrainOptions options, const ValidationTranslator& translator, TrainHooks* hooks = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  TrainResult train();

 private:
  class Session;
  std::unique_ptr<Session> session_;
};

}  // namespace attn::train
