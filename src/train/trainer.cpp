#include "attn/train/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/core/stop_signals.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/products.h"
#include "attn/train/batching.h"
#include "attn/train/communicator.h"
#include "attn/train/gradient_accumulator.h"
#include "attn/train/log_window.h"
#include "attn/train/run_dir.h"
#include "attn/train/run_start.h"
#include "attn/train/train_data.h"
#include "attn/train/train_log.h"
#include "attn/train/validation.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The dropout stream of batch `batch` of epoch `epoch`: a Philox counter
// range of its own (2^28 blocks, far more than a batch draws), so whichever
// rank computes a batch draws the same masks, and a run resumed with another
// number of ranks stays the same run.
RngState batch_rng_state(std::uint64_t seed, std::int64_t epoch, std::int64_t batch) {
  const std::uint64_t key = (static_cast<std::uint64_t>(epoch) << 20) + static_cast<std::uint64_t>(batch);
  return {seed, key << 28, 0};
}

}  // namespace

// One session of a training run (a resume starts another): the loop, and the
// steps it is made of. What it starts from, the save directory, the data, the
// gradient's sum and the log's windows are roles of their own (run_start.h,
// run_dir.h, train_data.h, gradient_accumulator.h, log_window.h).
class Trainer::Session {
 public:
  Session(TrainOptions options, const ValidationTranslator& translator, TrainHooks* hooks)
      : o_(std::move(options)), translator_(translator), hooks_(hooks ? hooks : &no_hooks_),
        comm_(Communicator::world()), root_(comm_.is_root()), run_dir_(o_.save_dir, o_.log_json, o_.keep_last, root_) {}

  TrainResult train() {
    open();
    try {
      return loop();
    } catch (const LogWriteError& e) {
      // The log is lost, the training need not be: keep it resumable.
      checkpoint();
      throw Error(std::string(e.what()) + "; training stopped, a resumable checkpoint is in " +
                  run_dir_.last().string() +
                  " (free space, or give --log-json another file, and run the same command again)");
    }
  }

 private:
  TrainResult loop() {
    bool stop = false;
    while (!stop && (o_.max_epochs <= 0 || state_.epoch <= o_.max_epochs) && !limits_reached()) {
      const auto batches = plan_batches(data_.begin_epoch(state_.epoch), o_.max_tokens, o_.seed, state_.epoch, true);
      epoch_batches_ = static_cast<std::int64_t>(batches.size());
      while (state_.batch_in_epoch < epoch_batches_) {
        hooks_->before_update(state_.update);
        if (stop_requested() || hooks_->stop(updates_this_session_)) return interrupted();
        if (!update(batches)) continue;  // skipped: its batches are consumed, the update number stays
        if (o_.valid_every > 0 && state_.update % o_.valid_every == 0 && validate()) stop = true;
        if (stop || limits_reached()) {
          stop = true;
          break;
        }
      }
      if (state_.batch_in_epoch >= epoch_batches_) {
        ++state_.epoch;
        state_.batch_in_epoch = 0;
        ++result_.epochs_done;
        if (o_.valid_every <= 0 && validate()) {
          log_->message("early stop: no improvement in " + std::to_string(o_.patience) + " validations");
          stop = true;
        }
      }
    }
    return finish();
  }

  // One update over the next update_freq batches of the epoch, its gradient
  // summed over batches and ranks, then averaged per token. False when the
  // update was skipped for a NaN/Inf (throws once --skip-bad-batches are used up).
  bool update(const std::vector<BatchIndices>& batches) {
    model_->params().zero_grads();
    const std::int64_t first = state_.batch_in_epoch, count = std::min(o_.update_freq, epoch_batches_ - first);
    // --precision bf16: the forward and backward products only, on the session's own bf16 forms of
    // this update's weights; the sums, the optimizer and validation stay FP32 (the store's own forms).
    model_->params().make_forms(*training_forms_);
    std::array<double, 3> sums{};
    {
      const nn::ParamStore::Lend lend(model_->params(), *training_forms_);
      sums = gradients_->accumulate(count, [&](std::int64_t k, const GradientAccumulator::ChunkDone* chunk_done) {
        arena_.reset();
        rng_.set_state(batch_rng_state(state_.rng.seed, state_.epoch, first + k));
        const model::Batch batch = gather_batch(data_.epoch_examples(), batches[first + k]);
        return model_->forward_backward(*ctx_, batch, o_.label_smoothing, true, 1.0f, chunk_done);
      });
    }
    comm_.sum(sums);  // loss, nll, target tokens
    state_.batch_in_epoch = first + count;
    double loss = sums[0];
    const auto tokens = static_cast<std::int64_t>(sums[2]);
    auto grads = model_->params().grads();
    kernels::scale(grads.data(), 1.0f / static_cast<float>(std::max<std::int64_t>(tokens, 1)),
                   static_cast<std::int64_t>(grads.size()));
    if (hooks_->poison(++attempts_this_session_)) loss = std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(loss) || !kernels::all_finite(grads.data(), static_cast<std::int64_t>(grads.size()))) {
      skip_bad_update();
      return false;
    }
    const Adam::StepInfo step = optimizer_->step(model_->params());
    ++state_.update;
    ++updates_this_session_;
    state_.target_tokens += tokens;
    window_.add(loss, sums[1], tokens);
    log_progress(step);
    return true;
  }

  // Loss and BLEU on the validation set (and, with --join-pairs, on the set
  // joined K at a time), the best score and patience, then the checkpoints.
  // True when patience is exhausted.
  bool validate() {
    hooks_->before_validation(state_.update);
    const ValidationScores v = score_validation(comm_, *model_, translator_, bpe_, data_.valid(),
                                                data_.valid_references(), o_.label_smoothing, o_.max_tokens, arena_);
    state_.last_valid_bleu = v.bleu;
    state_.last_valid_loss = v.loss;
    LogRecord r;
    r.split = "valid";
    r.update = state_.update;
    // Right after an epoch's last update (here or at the top of the next epoch): that epoch.
    r.epoch_end = (state_.batch_in_epoch == 0 && state_.update > 0) ||
                  (epoch_batches_ > 0 && state_.batch_in_epoch == epoch_batches_);
    r.epoch = state_.batch_in_epoch == 0 && state_.update > 0 ? state_.epoch - 1 : state_.epoch;
    r.loss = v.loss;
    r.nll = v.nll;
    r.bleu = v.bleu;
    r.target_tokens = state_.target_tokens;
    r.lr = inverse_sqrt_lr(o_.optimizer, state_.update);
    double metric = o_.best_metric == BestMetric::bleu ? v.bleu : -v.loss;
    if (joined_validation()) {
      // The model is meant for inputs of 1…K sentences: it is chosen on both ends of that range alike.
      const ValidationScores j = score_validation(comm_, *model_, translator_, bpe_, data_.valid_joined(),
                                                  data_.valid_joined_references(), o_.label_smoothing, o_.max_tokens,
                                                  arena_);
      r.joined = LogRecord::Joined{o_.join_pairs, j.loss, j.nll, j.bleu};
      metric = 0.5 * (metric + (o_.best_metric == BestMetric::bleu ? j.bleu : -j.loss));
    }
    r.elapsed_s = elapsed();  // once every set is scored
    log_->valid(r);
    const bool improved = !state_.has_best || metric > state_.best_metric;
    if (improved) {
      state_.has_best = true;
      state_.best_metric = metric;
      state_.best_update = state_.update;
      state_.bad_validations = 0;
    } else {
      ++state_.bad_validations;
    }
    checkpoint(improved);
    return o_.patience > 0 && state_.bad_validations >= o_.patience;
  }

  // Every --log-every updates a train record, the mean over the updates since
  // the previous one; between records, on a terminal, the progress line.
  void log_progress(const Adam::StepInfo& step) {
    const bool record = state_.update % o_.log_every == 0;
    if (!record && !(log_->shows_progress() && window_.line_due())) return;
    LogRecord r = window_.record();
    r.update = state_.update;
    r.epoch = state_.epoch;
    r.lr = step.lr;
    r.grad_norm = step.grad_norm;
    r.elapsed_s = elapsed();
    r.epoch_fraction = static_cast<double>(state_.batch_in_epoch) / static_cast<double>(epoch_batches_);
    r.target_tokens = state_.target_tokens;
    if (o_.max_time_s > 0) r.eta_s = o_.max_time_s - r.elapsed_s;
    if (record) {
      log_->train(r);
      window_.restart();
    } else {
      log_->progress(r);
      window_.line_drawn();
    }
  }

  void skip_bad_update() {
    const std::string where = "update " + std::to_string(state_.update + 1) + " (epoch " +
                              std::to_string(state_.epoch) + ", batch " + std::to_string(state_.batch_in_epoch) +
                              " of " + std::to_string(epoch_batches_) + ")";
    if (bad_skipped_ >= o_.skip_bad_batches)
      throw Error("the loss or a gradient became NaN/Inf at " + where + "; the last good checkpoint is " +
                  run_dir_.last().string() +
                  "; try a lower --lr or --clip-norm, or --skip-bad-batches N to skip a few");
    ++bad_skipped_;
    log_->message("skipped " + where + ": the loss or a gradient is NaN/Inf (" + std::to_string(bad_skipped_) +
                  " of --skip-bad-batches " + std::to_string(o_.skip_bad_batches) + ")");
  }

  // last.attn, and after a validation best.attn when it improved and ckpt.<update>.attn with --keep-last.
  void checkpoint(std::optional<bool> improved = std::nullopt) {
    state_.rng = rng_.state();
    state_.elapsed_s = elapsed();
    run_dir_.save(*model_, bpe_, state_, *optimizer_, improved);
  }

  TrainResult interrupted() {
    checkpoint();
    log_->message("stopped: a resumable checkpoint is in " + run_dir_.last().string());
    log_->ended(state_.update, elapsed(), "interrupted");
    result_.interrupted = true;
    result_.signal = stop_.signal();
    result_.updates = state_.update;
    return result_;
  }

  // A final validation when the run ended mid-epoch (time or update limit), so
  // best reflects the end, or when no validation has chosen a best model yet
  // (a resume into a new save dir with nothing left to train included): every
  // run ends with last.attn and best.attn. A run that had nothing left to do
  // and has both changes nothing.
  TrainResult finish() {
    if (!state_.has_best) {
      validate();
    } else if (updates_this_session_ > 0) {
      if (state_.batch_in_epoch > 0 && o_.valid_every <= 0)
        validate();
      else
        checkpoint();
    }
    result_.updates = state_.update;
    result_.best_metric = state_.best_metric;
    if (comm_.size() > 1)
      log_->message("all-reduce: waited " + format_fixed(gradients_->wait_seconds(), 2) +
                    " s for the gradient sums over " + std::to_string(updates_this_session_) + " updates");
    log_->ended(state_.update, elapsed(), "finished");
    // With --join-pairs the best model is chosen on the mean of the single and the joined sets' scores.
    const std::string metric = joined_validation() ? "mean " + std::string(best_metric_name(o_.best_metric)) +
                                                         " (single, ×" + std::to_string(o_.join_pairs) + ")"
                                                   : std::string(best_metric_name(o_.best_metric));
    log_->message("done: " + std::to_string(state_.update) + " updates; best " + metric + " " +
                  std::to_string(o_.best_metric == BestMetric::bleu ? state_.best_metric : -state_.best_metric) +
                  " at update " + std::to_string(state_.best_update) + "; models in " + o_.save_dir.string());
    return result_;
  }

  bool joined_validation() const { return !data_.valid_joined().examples.empty(); }
  double elapsed() const { return elapsed_before_ + seconds_since(session_start_); }

  // Every rank stops at the same update: rank 0's clock and any rank's signal decide.
  bool stop_requested() {
    double requested[1] = {stop_.requested() ? 1.0 : 0.0};
    comm_.sum(requested);
    return requested[0] > 0.0;
  }
  bool limits_reached() {
    if (o_.max_updates > 0 && state_.update >= o_.max_updates) return true;
    if (o_.max_time_s <= 0) return false;
    double t[1] = {root_ ? elapsed() : 0.0};
    comm_.sum(t);
    return t[0] >= o_.max_time_s;
  }

  // Checks the options, reads the data (a bad corpus fails before any work)
  // and resumes the model, its BPE and the training state from a checkpoint,
  // or starts them.
  void open() {
    require(o_.max_tokens > 0, "--max-tokens must be positive");
    require(o_.update_freq > 0, "--update-freq must be positive");
    require(o_.join_pairs >= 1, "--join-pairs must be at least 1");
    // Everything the run reads is checked before it writes anything: a run
    // that cannot start leaves no new file behind. A save dir in use is said first.
    run_dir_.require_unheld();
    data_.read(o_);
    fs::path resume_from = o_.resume;
    if (resume_from.empty() && fs::exists(run_dir_.last())) resume_from = run_dir_.last();
    std::optional<model::LoadedModel> checkpoint;
    if (!resume_from.empty()) checkpoint = open_checkpoint(o_, resume_from);
    log_ = std::make_unique<TrainLog>(o_.quiet || !root_);  // the JSON log is opened once the rest is ready
    if (!comm_.describe().empty()) log_->message(comm_.describe());
    // The save dir is locked before the long part of the start (the BPE, the encoding), so that a second
    // training into it is refused at once. Whatever fails from here on is undone: the save dir is left
    // as it was found (a checkpoint without an optimizer, no usable pair, a log that cannot be written).
    run_dir_.lock();
    try {
      RunStart begun = checkpoint ? resume_run(o_, *checkpoint, resume_from, run_dir_.best(), comm_, *log_)
                                  : new_run(o_, data_.train_text(), *log_);
      model_ = std::move(begun.model);
      bpe_ = std::move(begun.bpe);
      optimizer_ = std::move(begun.optimizer);
      state_ = std::move(begun.state);
      changed_flags_ = std::move(begun.changed_flags);
      log_->message("model: " + model_->config().arch + ", " + std::to_string(model_->parameter_count()) +
                    " parameters");
      data_.encode(o_, bpe_, *log_);
      if (root_ && !o_.log_json.empty()) log_->open_json(o_.log_json);  // empty: no JSON log (library callers)
      log_->started(model_->config(), model_->parameter_count(), state_.update, state_.elapsed_s, state_.flags,
                    changed_flags_);
    } catch (...) {
      log_->close_json();
      run_dir_.undo_start();
      throw;
    }
    run_dir_.remove_abandoned_temporaries();  // of a process killed while saving
    rng_.set_state(state_.rng);
    ctx_ = std::make_unique<nn::StepContext>(nn::StepContext{model_->params(), arena_, rng_, true});
    training_forms_.emplace(kernels::ComputeTypes::training(*o_.precision), nn::ParamStore::Use::training,
                            model_->params().weight_matrices().size());
    gradients_ = std::make_unique<GradientAccumulator>(comm_, model_->params(), model_->gradient_chunks());
    result_.last = run_dir_.last();
    result_.best = run_dir_.best();
    session_start_ = Clock::now();
    elapsed_before_ = state_.elapsed_s;
    window_.start();
  }

  const TrainOptions o_;
  const ValidationTranslator& translator_;
  TrainHooks no_hooks_;
  TrainHooks* hooks_;
  Communicator& comm_;
  const bool root_;  // rank 0 alone logs and writes files
  RunDir run_dir_;
  std::unique_ptr<TrainLog> log_;  // opened once the save directory is ours
  StopRequest stop_;               // SIGINT, SIGTERM, SIGHUP: stop at the next update with a checkpoint
  TrainData data_;

  std::unique_ptr<model::Seq2Seq> model_;
  text::Bpe bpe_;
  TrainState state_;
  std::unique_ptr<Adam> optimizer_;
  Arena arena_;
  Rng rng_{0};
  std::unique_ptr<nn::StepContext> ctx_;
  std::unique_ptr<GradientAccumulator> gradients_;
  std::int64_t epoch_batches_ = 0;  // batches of the epoch in progress; 0 before its plan
  LogWindow window_;
  std::optional<nn::WeightForms> training_forms_;  // what the forward and backward multiply by (--precision)
  std::string changed_flags_;                      // since the checkpoint resumed, for the log
  TrainResult result_;

  Clock::time_point session_start_;
  double elapsed_before_ = 0.0;
  std::int64_t updates_this_session_ = 0;
  std::int64_t attempts_this_session_ = 0, bad_skipped_ = 0;  // update attempts, and those skipped as NaN/Inf
};

Trainer::Trainer(TrainOptions options, const ValidationTranslator& translator, TrainHooks* hooks) {
  if (!options.precision) throw std::invalid_argument("TrainOptions::precision is not set");
  session_ = std::make_unique<Session>(std::move(options), translator, hooks);
}
Trainer::~Trainer() = default;
TrainResult Trainer::train() { return session_->train(); }

std::string_view best_metric_name(BestMetric metric) { return metric == BestMetric::bleu ? "bleu" : "loss"; }

std::optional<BestMetric> parse_best_metric(std::string_view text) {
  if (text == "bleu") return BestMetric::bleu;
  if (text == "loss") return BestMetric::loss;
  return std::nullopt;
}

}  // namespace attn::train
