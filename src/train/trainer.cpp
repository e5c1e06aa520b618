#include "attn/train/trainer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>

#include <signal.h>

#include "attn/core/atomic_file.h"
#include "attn/core/dir_lock.h"
#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/core/stop_signals.h"
#include "attn/eval/bleu.h"
#include "attn/kernels/products.h"
#include "attn/kernels/elementwise.h"
#include "attn/model/model_file.h"
#include "attn/train/batching.h"
#include "attn/train/checkpoint.h"
#include "attn/train/communicator.h"
#include "attn/train/corpus.h"
#include "attn/train/joined_pairs.h"
#include "attn/train/run_flags.h"
#include "attn/train/train_log.h"
#include "attn/train/validation_translator.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig); }

// Installs the stop signals' handlers (SIGINT, SIGTERM, SIGHUP: a closed
// terminal must not lose the updates since the last checkpoint) for the
// lifetime of a training run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal.store(0);
    for (std::size_t i = 0; i < stop_signals().size(); ++i)
      previous_[i] = std::signal(stop_signals()[i], on_stop_signal);
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < stop_signals().size(); ++i) std::signal(stop_signals()[i], previous_[i]);
  }
  bool requested() const { return g_stop_signal.load() != 0; }
  int which() const { return g_stop_signal.load(); }

 private:
  std::array<void (*)(int), 8> previous_{};
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Validation {
  double loss = 0.0, nll = 0.0, bleu = 0.0;
};

// Loss and greedy BLEU on the validation set. With several ranks each takes
// every size-th batch; the sums and the hypotheses meet on rank 0, which
// scores BLEU, and every rank gets the same numbers back.
// arena: the training step's, free between updates (a fresh one would fault
// its pages in again at every validation).
Validation validation_scores(Communicator& comm, model::Seq2Seq& model, const ValidationTranslator& translator,
                             const text::Bpe& bpe, const EncodedCorpus& valid,
                             const std::vector<std::string>& references, float label_smoothing, std::int64_t max_tokens,
                             Arena& arena) {
  Rng rng(0);
  nn::StepContext ctx{model.params(), arena, rng, false};
  double sums[3] = {0.0, 0.0, 0.0};  // loss, nll, tokens
  std::string mine;                  // "index length text" for each of this rank's sentences
  const auto batches = plan_batches(valid.examples, max_tokens, 0, 0, false);
  for (std::size_t b = static_cast<std::size_t>(comm.rank()); b < batches.size();
       b += static_cast<std::size_t>(comm.size())) {
    const BatchIndices& indices = batches[b];
    arena.reset();
    const model::Batch batch = gather_batch(valid.examples, indices);
    const nn::LossSums loss = model.forward_backward(ctx, batch, label_smoothing, false, 0.0f);
    sums[0] += loss.loss;
    sums[1] += loss.nll;
    sums[2] += static_cast<double>(loss.tokens);
    std::vector<std::vector<std::int32_t>> sources;
    for (std::int64_t i : indices) sources.push_back(valid.examples[i].src);
    arena.reset();
    const auto hyps = translator.translate(ctx, model, sources);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const std::string text = bpe.decode(hyps[k]);  // any bytes: length-prefixed
      mine += std::to_string(indices[k]) + ' ' + std::to_string(text.size()) + ' ' + text;
    }
  }
  comm.sum(sums);
  Validation v;
  v.loss = sums[2] > 0 ? sums[0] / sums[2] : 0.0;
  v.nll = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  double bleu[1] = {0.0};
  const std::vector<std::string> parts = comm.gather(mine);
  if (comm.is_root()) {
    std::vector<std::string> hypotheses(valid.examples.size());
    for (const std::string& part : parts) {
      std::size_t at = 0;
      while (at < part.size()) {
        const std::size_t space = part.find(' ', at), second = part.find(' ', space + 1);
        const std::size_t index = std::stoull(part.substr(at, space - at));
        const std::size_t length = std::stoull(part.substr(space + 1, second - space - 1));
        hypotheses[index] = part.substr(second + 1, length);
        at = second + 1 + length;
      }
    }
    std::vector<std::string> refs;
    for (std::int64_t line : valid.line) refs.push_back(references[static_cast<std::size_t>(line)]);
    const std::vector<std::vector<std::string>> streams{refs};
    bleu[0] = eval::Bleu().corpus_score(hypotheses, streams).score;
  }
  comm.sum(bleu);  // rank 0's score to every rank
  v.bleu = bleu[0];
  return v;
}

// The dropout stream of batch `batch` of epoch `epoch`: a Philox counter
// range of its own (2^28 blocks, far more than a batch draws), so whichever
// rank computes a batch draws the same masks, and a run resumed with another
// number of ranks stays the same run.
RngState batch_rng_state(std::uint64_t seed, std::int64_t epoch, std::int64_t batch) {
  const std::uint64_t key = (static_cast<std::uint64_t>(epoch) << 20) + static_cast<std::uint64_t>(batch);
  return {seed, key << 28, 0};
}

// Keeps the newest `keep` files named ckpt.<update>.attn in dir.
void prune_periodic(const fs::path& dir, std::int64_t keep) {
  const std::vector<fs::path> found = periodic_checkpoints(dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < found.size(); ++i) fs::remove(found[i]);
}

}  // namespace

int pending_stop_signal() { return g_stop_signal.load(); }

// One session of a training run (a resume starts another): its state, and its steps.
class Trainer::Session {
 public:
  Session(TrainOptions options, const ValidationTranslator& translator, TrainHooks* hooks)
      : o_(std::move(options)), translator_(translator), hooks_(hooks ? hooks : &no_hooks_),
        comm_(Communicator::world()), root_(comm_.is_root()), last_path_(o_.save_dir / "last.attn"),
        best_path_(o_.save_dir / "best.attn") {}

  TrainResult train() {
    open();
    try {
      return loop();
    } catch (const LogWriteError& e) {
      // The log is lost, the training need not be: keep it resumable.
      checkpoint();
      throw Error(std::string(e.what()) + "; training stopped, a resumable checkpoint is in " + last_path_.string() +
                  " (free space, or give --log-json another file, and run the same command again)");
    }
  }

 private:
  TrainResult loop() {
    bool stop = false;
    while (!stop && (o_.max_epochs <= 0 || state_.epoch <= o_.max_epochs) && !limits_reached()) {
      if (o_.join_pairs > 1) joined_ = join_pairs(train_, o_.join_pairs, o_.max_len, o_.seed, state_.epoch);
      const auto batches = plan_batches(epoch_examples(), o_.max_tokens, o_.seed, state_.epoch, true);
      const auto n_batches = static_cast<std::int64_t>(batches.size());
      while (state_.batch_in_epoch < n_batches) {
        hooks_->before_update(state_.update);
        if (stop_requested() || hooks_->stop(updates_this_session_)) return interrupted();
        if (!update(batches)) continue;  // skipped: its batches are consumed, the update number stays
        if (o_.valid_every > 0 && state_.update % o_.valid_every == 0 && validate()) stop = true;
        if (stop || limits_reached()) {
          stop = true;
          break;
        }
      }
      if (state_.batch_in_epoch >= n_batches) {
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

  // Checks the options, reads the data (a bad corpus fails before any work)
  // and resumes the model, its BPE and the training state from a checkpoint,
  // or starts them.
  void open() {
    require(o_.max_tokens > 0, "--max-tokens must be positive");
    require(o_.update_freq > 0, "--update-freq must be positive");
    require(o_.join_pairs >= 1, "--join-pairs must be at least 1");
    // Everything the run reads is checked before it writes anything: a run
    // that cannot start leaves no new file behind. A save dir in use is said first.
    if (root_) DirLock::require_unheld(o_.save_dir);
    train_text_ = read_parallel(o_.train_src, o_.train_tgt, "training");
    valid_text_ = read_parallel(o_.valid_src, o_.valid_tgt, "validation");
    fs::path resume_from = o_.resume;
    if (resume_from.empty() && fs::exists(last_path_)) resume_from = last_path_;
    std::optional<model::LoadedModel> checkpoint;
    if (!resume_from.empty()) checkpoint = open_checkpoint(resume_from);
    log_ = std::make_unique<TrainLog>(o_.quiet || !root_);  // the JSON log is opened once the rest is ready
    if (!comm_.describe().empty()) log_->message(comm_.describe());
    // The save dir is locked before the long part of the start (the BPE, the encoding), so that a second
    // training into it is refused at once. Whatever fails from here on is undone: the save dir is left
    // as it was found (a checkpoint without an optimizer, no usable pair, a log that cannot be written).
    const SaveDirBefore before = lock_save_dir();
    try {
      if (checkpoint)
        resume(*checkpoint, resume_from);
      else
        start();
      encode_data();
      if (root_ && !o_.log_json.empty()) log_->open_json(o_.log_json);  // empty: no JSON log (library callers)
      log_->started(model_->config(), model_->parameter_count(), state_.update, state_.elapsed_s, state_.flags,
                    changed_flags_);
    } catch (...) {
      undo_start(before);
      throw;
    }
    if (root_) remove_abandoned_temporaries(o_.save_dir);  // of a process killed while saving
    rng_.set_state(state_.rng);
    ctx_ = std::make_unique<nn::StepContext>(nn::StepContext{model_->params(), arena_, rng_, true});
    training_forms_.emplace(kernels::ComputeTypes::training(*o_.precision), nn::ParamStore::Use::training,
                            model_->params().weight_matrices().size());
    chunks_ = model_->gradient_chunks();
    gradient_sum_ = std::make_unique<Communicator::GradientSum>(comm_, model_->params().grads(), chunks_);
    result_.last = last_path_;
    result_.best = best_path_;
    session_start_ = Clock::now();
    elapsed_before_ = state_.elapsed_s;
    window_start_ = Clock::now();
  }

  // What a failed start must restore: whether the save dir, its lock file and the log were there.
  struct SaveDirBefore {
    bool made_dir = false, lock_existed = true, log_existed = true, log_regular = false;
    std::uintmax_t log_size = 0;
  };

  // Creates the save dir and (rank 0) takes its lock: one process per save
  // dir, rank 0 for all ranks, or a second training would mix its checkpoints
  // and log into this one's.
  SaveDirBefore lock_save_dir() {
    SaveDirBefore before;
    std::error_code ec;
    before.lock_existed = fs::exists(o_.save_dir / "attn.lock", ec);
    // No JSON log (an empty path) is as one that was there: nothing to undo.
    before.log_existed = o_.log_json.empty() || fs::exists(o_.log_json, ec);
    before.log_regular = fs::is_regular_file(o_.log_json, ec);
    before.log_size = before.log_regular ? fs::file_size(o_.log_json, ec) : 0;
    before.made_dir = fs::create_directories(o_.save_dir, ec);
    require(!ec && fs::is_directory(o_.save_dir),
            o_.save_dir.string() + ": cannot create the save directory (" + ec.message() + ")");
    if (!root_) return before;
    try {
      lock_ = std::make_unique<DirLock>(o_.save_dir);
    } catch (const Error&) {
      std::error_code ignored;
      if (before.made_dir) fs::remove(o_.save_dir, ignored);  // empty unless another process uses it now
      throw;
    }
    return before;
  }

  // Undoes what this process made in the save dir while it held the lock
  // (rank 0: the others made nothing of their own there).
  void undo_start(const SaveDirBefore& before) {
    log_->close_json();
    if (!lock_) return;
    std::error_code ignored;
    if (!before.log_existed)
      fs::remove(o_.log_json, ignored);
    else if (before.log_regular && fs::file_size(o_.log_json, ignored) > before.log_size)
      fs::resize_file(o_.log_json, before.log_size, ignored);  // a cut last line it removed stays removed
    if (before.made_dir) {
      lock_.reset();
      fs::remove_all(o_.save_dir, ignored);
    } else {
      if (!before.lock_existed) fs::remove(o_.save_dir / "attn.lock", ignored);  // while held: nobody took it
      lock_.reset();
    }
  }

  void encode_data() {
    log_->message("model: " + model_->config().arch + ", " + std::to_string(model_->parameter_count()) + " parameters");
    train_ = encode_corpus(train_text_, bpe_, o_.max_len);
    valid_ = encode_corpus(valid_text_, bpe_, o_.max_len);
    if (o_.join_pairs > 1) {
      valid_joined_text_ = join_lines(valid_text_, o_.join_pairs);
      valid_joined_ = encode_corpus(valid_joined_text_, bpe_, o_.max_len);
      if (valid_joined_.examples.empty())
        log_->message("valid: no joined validation (fewer than " + std::to_string(o_.join_pairs) +
                      " usable pairs joined within --max-len)");
    }
    require(!train_.examples.empty(),
            o_.train_src.string() + ": no usable sentence pairs (all empty or longer than --max-len)");
    if (train_.skipped_empty || train_.skipped_long)
      log_->message("train: skipped " + std::to_string(train_.skipped_empty) + " pairs with an empty side and " +
                    std::to_string(train_.skipped_long) + " longer than --max-len " + std::to_string(o_.max_len));
  }

  // The checkpoint to resume from, refused when it holds another model than the flags ask for.
  model::LoadedModel open_checkpoint(const fs::path& from) {
    model::LoadedModel loaded = model::load_model_file(from, model::ComputeType::fp32);
    if (o_.arch_given && loaded.model->config().arch != o_.model.arch)
      throw Error(from.string() + " holds a '" + loaded.model->config().arch + "' model but --arch is '" +
                  o_.model.arch + "'; use another --save-dir or the same --arch");
    check_model_flags(from, loaded.model->config(), read_train_state(loaded).flags, o_.model_flags_given);
    return loaded;
  }

  void resume(model::LoadedModel& loaded, const fs::path& from) {
    state_ = read_train_state(loaded);
    model_ = std::move(loaded.model);
    bpe_ = std::move(loaded.bpe);
    optimizer_ = std::make_unique<Adam>(model_->params(), o_.optimizer);
    restore_optimizer(loaded, *optimizer_);
    log_->message("resuming from " + from.string() + " at update " + std::to_string(state_.update) + ", epoch " +
                  std::to_string(state_.epoch));
    // The best model so far is SAVE_DIR/best.attn. A save dir without one (a resume into a new
    // folder, or best.attn removed) chooses it anew from this run's validations, so that the run
    // writes one; rank 0 decides for all ranks.
    double no_best[1] = {root_ && state_.has_best && !fs::exists(best_path_) ? 1.0 : 0.0};
    comm_.sum(no_best);
    if (no_best[0] > 0) {
      log_->message(o_.save_dir.string() + " has no best.attn: the best model is chosen anew from this run's " +
                    "validations (the checkpoint's best was at update " + std::to_string(state_.best_update) + ")");
      state_.has_best = false;
      state_.bad_validations = 0;
    }
    const nlohmann::json flags = training_flags(o_);
    changed_flags_ = changed_training_flags(state_.flags, flags);
    if (!changed_flags_.empty()) log_->message("training flags changed since the checkpoint: " + changed_flags_);
    state_.flags = flags;
  }

  void start() {
    const auto t0 = Clock::now();
    std::vector<std::string> lines = train_text_.src;
    lines.insert(lines.end(), train_text_.tgt.begin(), train_text_.tgt.end());
    text::Bpe::Options bpe_options;
    bpe_options.vocab_size = static_cast<std::int32_t>(o_.vocab_size);
    bpe_ = text::Bpe::learn(lines, bpe_options);
    char msg[128];
    std::snprintf(msg, sizeof msg, "learned a joint BPE of %d pieces in %.1f s", bpe_.vocab().size(),
                  seconds_since(t0));
    log_->message(msg);
    model::ModelConfig config = o_.model;
    config.vocab_size = bpe_.vocab().size();
    model_ = std::make_unique<model::Seq2Seq>(config);
    Rng init(o_.seed);
    model_->initialize(init);
    optimizer_ = std::make_unique<Adam>(model_->params(), o_.optimizer);
    state_.rng = Rng(o_.seed + 1).state();
    state_.flags = training_flags(o_);
  }

  // One update over the next update_freq batches of the epoch. Rank r
  // computes those at k ≡ r (mod ranks); the gradients are summed over ranks
  // (the last of a rank's batches starts that as backward goes), then averaged
  // per token. False when the update was skipped for a NaN/Inf (throws once
  // --skip-bad-batches are used up).
  bool update(const std::vector<BatchIndices>& batches) {
    const auto n_batches = static_cast<std::int64_t>(batches.size());
    model_->params().zero_grads();
    const std::int64_t first = state_.batch_in_epoch, count = std::min(o_.update_freq, n_batches - first);
    double sums[3] = {0.0, 0.0, 0.0};  // loss, nll, target tokens
    // --precision bf16: the forward and backward products only, on the session's own bf16 forms of
    // this update's weights; the sums, the optimizer and validation stay FP32 (the store's own forms).
    model_->params().make_forms(*training_forms_);
    {
      const nn::ParamStore::Lend lend(model_->params(), *training_forms_);
      accumulate_gradients(batches, first, count, sums);
    }
    comm_.sum(sums);
    state_.batch_in_epoch = first + count;
    double loss = sums[0];
    const auto tokens = static_cast<std::int64_t>(sums[2]);
    auto grads = model_->params().grads();
    kernels::scale(grads.data(), 1.0f / static_cast<float>(std::max<std::int64_t>(tokens, 1)),
                   static_cast<std::int64_t>(grads.size()));
    if (hooks_->poison(++attempts_this_session_)) loss = std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(loss) || !kernels::all_finite(grads.data(), static_cast<std::int64_t>(grads.size()))) {
      skip_bad_update(n_batches);
      return false;
    }
    const Adam::StepInfo step = optimizer_->step(model_->params());
    ++state_.update;
    ++updates_this_session_;
    state_.target_tokens += tokens;
    log_progress(step, loss, sums[1], tokens, n_batches);
    return true;
  }

  // This rank's batches of the update, forward and backward. A rank's second
  // and later batches are computed from zero gradients and added to the sum of
  // the earlier ones (kept in earlier_), so one process with --update-freq 2
  // adds g0 + g1 exactly as 2 ranks' sum does.
  void accumulate_gradients(const std::vector<BatchIndices>& batches, std::int64_t first, std::int64_t count,
                            double* sums) {
    std::int64_t last_mine = -1;
    for (std::int64_t k = comm_.rank(); k < count; k += comm_.size()) last_mine = k;
    add_earlier_ = false;
    const std::function<void(std::size_t)> chunk_done = [this](std::size_t chunk) { gradient_chunk_done(chunk); };
    for (std::int64_t k = comm_.rank(); k < count; k += comm_.size()) {
      if (k > comm_.rank()) {  // not this rank's first batch of the update
        auto g = model_->params().grads();
        if (!add_earlier_)
          earlier_.assign(g.begin(), g.end());
        else
          kernels::add(earlier_.data(), g.data(), earlier_.data(), static_cast<std::int64_t>(g.size()));
        model_->params().zero_grads();
        add_earlier_ = true;
      }
      arena_.reset();
      rng_.set_state(batch_rng_state(state_.rng.seed, state_.epoch, first + k));
      const model::Batch batch = gather_batch(epoch_examples(), batches[first + k]);
      const nn::LossSums batch_sums = model_->forward_backward(*ctx_, batch, o_.label_smoothing, true, 1.0f,
                                                               k == last_mine ? &chunk_done : nullptr);
      sums[0] += batch_sums.loss;
      sums[1] += batch_sums.nll;
      sums[2] += static_cast<double>(batch_sums.tokens);
    }
    for (std::size_t chunk = gradient_sum_->started(); chunk < chunks_.size(); ++chunk) gradient_chunk_done(chunk);
    gradient_sum_->finish();
  }

  // A chunk of the gradient is final on this rank: add the earlier batches' part, start its sum over ranks.
  void gradient_chunk_done(std::size_t chunk) {
    if (add_earlier_) {
      const auto [begin, end] = chunks_[chunk];
      float* g = model_->params().grads().data();
      kernels::add(earlier_.data() + begin, g + begin, g + begin, end - begin);
    }
    gradient_sum_->start(chunk);
  }

  void skip_bad_update(std::int64_t n_batches) {
    const std::string where = "update " + std::to_string(state_.update + 1) + " (epoch " +
                              std::to_string(state_.epoch) + ", batch " + std::to_string(state_.batch_in_epoch) +
                              " of " + std::to_string(n_batches) + ")";
    if (bad_skipped_ >= o_.skip_bad_batches)
      throw Error("the loss or a gradient became NaN/Inf at " + where + "; the last good checkpoint is " +
                  last_path_.string() + "; try a lower --lr or --clip-norm, or --skip-bad-batches N to skip a few");
    ++bad_skipped_;
    log_->message("skipped " + where + ": the loss or a gradient is NaN/Inf (" + std::to_string(bad_skipped_) +
                  " of --skip-bad-batches " + std::to_string(o_.skip_bad_batches) + ")");
  }

  // The progress line (at most every 0.5 s) and, every --log-every updates, a log record.
  void log_progress(const Adam::StepInfo& step, double loss, double nll, std::int64_t tokens, std::int64_t n_batches) {
    window_tokens_ += tokens;
    window_loss_ += loss;
    window_nll_ += nll;
    const bool print = state_.update % o_.log_every == 0;
    const double window_s = seconds_since(window_start_);
    if (!print && window_s <= 0.5) return;
    const auto per_token = static_cast<double>(std::max<std::int64_t>(window_tokens_, 1));
    LogRecord r;
    r.split = "train";
    r.update = state_.update;
    r.epoch = state_.epoch;
    r.loss = window_loss_ / per_token;
    r.nll = window_nll_ / per_token;
    r.lr = step.lr;
    r.grad_norm = step.grad_norm;
    r.tokens_per_s = window_s > 0 ? static_cast<double>(window_tokens_) / window_s : 0.0;
    r.elapsed_s = elapsed();
    r.epoch_fraction = static_cast<double>(state_.batch_in_epoch) / static_cast<double>(n_batches);
    r.target_tokens = state_.target_tokens;
    if (o_.max_time_s > 0) r.eta_s = o_.max_time_s - r.elapsed_s;
    log_->train(r, print);
    if (!print) return;
    window_start_ = Clock::now();
    window_tokens_ = 0;
    window_loss_ = window_nll_ = 0.0;
  }

  // Loss and BLEU on the validation set, the best score and patience, then the
  // checkpoints. True when patience is exhausted.
  bool validate() {
    hooks_->before_validation(state_.update);
    const Validation v = validation_scores(comm_, *model_, translator_, bpe_, valid_, valid_text_.tgt,
                                           o_.label_smoothing, o_.max_tokens, arena_);
    state_.last_valid_bleu = v.bleu;
    state_.last_valid_loss = v.loss;
    LogRecord r;
    r.split = "valid";
    r.update = state_.update;
    r.epoch = state_.epoch;
    r.loss = v.loss;
    r.nll = v.nll;
    r.bleu = v.bleu;
    r.elapsed_s = elapsed();
    r.target_tokens = state_.target_tokens;
    r.lr = inverse_sqrt_lr(o_.optimizer, state_.update);
    double metric = o_.best_metric == BestMetric::bleu ? v.bleu : -v.loss;
    if (!valid_joined_.examples.empty()) {
      // The model is meant for inputs of 1…K sentences: it is chosen on both ends of that range alike.
      const Validation j = validation_scores(comm_, *model_, translator_, bpe_, valid_joined_, valid_joined_text_.tgt,
                                             o_.label_smoothing, o_.max_tokens, arena_);
      r.joined = LogRecord::Joined{o_.join_pairs, j.loss, j.nll, j.bleu};
      metric = 0.5 * (metric + (o_.best_metric == BestMetric::bleu ? j.bleu : -j.loss));
    }
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

  // last.attn, and after a validation best.attn when it improved and ckpt.<update>.attn with --keep-last.
  void checkpoint(std::optional<bool> improved = std::nullopt) {
    state_.rng = rng_.state();
    state_.elapsed_s = elapsed();
    if (!root_) return;
    save_checkpoint(last_path_, *model_, bpe_, state_, optimizer_.get());
    if (!improved) return;
    if (*improved) save_checkpoint(best_path_, *model_, bpe_, state_, nullptr);
    if (o_.keep_last > 0) {
      save_checkpoint(o_.save_dir / ("ckpt." + std::to_string(state_.update) + ".attn"), *model_, bpe_, state_,
                      optimizer_.get());
      prune_periodic(o_.save_dir, o_.keep_last);
    }
  }

  TrainResult interrupted() {
    checkpoint();
    log_->message("stopped: a resumable checkpoint is in " + last_path_.string());
    log_->ended(state_.update, elapsed(), "interrupted");
    result_.interrupted = true;
    result_.signal = signals_.which();
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
      log_->message("all-reduce: waited " + format_fixed(gradient_sum_->wait_seconds(), 2) +
                    " s for the gradient sums over " + std::to_string(updates_this_session_) + " updates");
    log_->ended(state_.update, elapsed(), "finished");
    log_->message("done: " + std::to_string(state_.update) + " updates; best " +
                  std::string(best_metric_name(o_.best_metric)) + " " +
                  std::to_string(o_.best_metric == BestMetric::bleu ? state_.best_metric : -state_.best_metric) +
                  " at update " + std::to_string(state_.best_update) + "; models in " + o_.save_dir.string());
    return result_;
  }

  double elapsed() const { return elapsed_before_ + seconds_since(session_start_); }

  // Every rank stops at the same update: rank 0's clock and any rank's signal decide.
  bool stop_requested() {
    double requested[1] = {signals_.requested() ? 1.0 : 0.0};
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

  const TrainOptions o_;
  const ValidationTranslator& translator_;
  TrainHooks no_hooks_;
  TrainHooks* hooks_;
  Communicator& comm_;
  const bool root_;                // rank 0 alone logs and writes files
  std::unique_ptr<DirLock> lock_;  // held for the whole run
  std::unique_ptr<TrainLog> log_;  // opened once the save directory is ours
  StopSignals signals_;
  const fs::path last_path_, best_path_;

  ParallelText train_text_, valid_text_, valid_joined_text_;
  EncodedCorpus train_, valid_, valid_joined_;
  std::vector<Example> joined_;  // this epoch's examples joined from train_, with --join-pairs above 1
  const std::vector<Example>& epoch_examples() const { return o_.join_pairs > 1 ? joined_ : train_.examples; }
  std::unique_ptr<model::Seq2Seq> model_;
  text::Bpe bpe_;
  TrainState state_;
  std::unique_ptr<Adam> optimizer_;
  Arena arena_;
  Rng rng_{0};
  std::unique_ptr<nn::StepContext> ctx_;
  std::optional<nn::WeightForms> training_forms_;  // what the forward and backward multiply by (--precision)
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks_;
  std::unique_ptr<Communicator::GradientSum> gradient_sum_;
  std::vector<float> earlier_;
  std::string changed_flags_;  // since the checkpoint resumed, for the log
  bool add_earlier_ = false;
  TrainResult result_;

  Clock::time_point session_start_;
  double elapsed_before_ = 0.0;
  std::int64_t updates_this_session_ = 0;
  std::int64_t attempts_this_session_ = 0, bad_skipped_ = 0;  // update attempts, and those skipped as NaN/Inf
  // Progress window for tokens/s and the mean loss.
  Clock::time_point window_start_;
  std::int64_t window_tokens_ = 0;
  double window_loss_ = 0.0, window_nll_ = 0.0;
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
