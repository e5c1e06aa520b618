#include "attn/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "attn/core/atomic_file.h"
#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/decode/search.h"
#include "attn/eval/bleu.h"
#include "attn/kernels/elementwise.h"
#include "attn/model/model_file.h"
#include "attn/train/batching.h"
#include "attn/train/checkpoint.h"
#include "attn/train/communicator.h"
#include "attn/train/corpus.h"
#include "attn/train/train_log.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig); }

// Installs SIGINT/SIGTERM handlers for the lifetime of a training run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal.store(0);
    previous_int_ = std::signal(SIGINT, on_stop_signal);
    previous_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~StopSignals() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  bool requested() const { return g_stop_signal.load() != 0; }
  int which() const { return g_stop_signal.load(); }

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
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
Validation validate(Communicator& comm, model::Seq2Seq& model, const text::Bpe& bpe, const EncodedCorpus& valid,
                    const std::vector<std::string>& references, float label_smoothing, std::int64_t max_tokens,
                    Arena& arena) {
  Rng rng(0);
  nn::StepContext ctx{model.params(), arena, rng, false};
  double sums[3] = {0.0, 0.0, 0.0};  // loss, nll, tokens
  std::string mine;                  // "index length text" for each of this rank's sentences
  const auto batches = plan_batches(valid.examples, max_tokens, 0, 0, false);
  decode::SearchOptions search;
  search.beam = 1;
  for (std::size_t b = static_cast<std::size_t>(comm.rank()); b < batches.size(); b += static_cast<std::size_t>(comm.size())) {
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
    const auto hyps = decode::greedy_search(ctx, model, sources, search);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const std::string text = bpe.decode(hyps[k].tokens);  // any bytes: length-prefixed
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

// --test-pause-at: "update:N" pauses before the update after N, "valid:N" as
// the validation after update N begins.
struct PausePoint {
  std::string where;  // "" none, "update", "valid"
  std::int64_t update = -1;
  bool at(const std::string& w, std::int64_t u) const { return where == w && update == u; }
};

PausePoint parse_pause_point(const std::string& text) {
  if (text.empty()) return {};
  const std::size_t colon = text.find(':');
  PausePoint p;
  p.where = text.substr(0, colon);
  try {
    if (colon != std::string::npos) p.update = std::stoll(text.substr(colon + 1));
  } catch (const std::exception&) {
  }
  require((p.where == "update" || p.where == "valid") && p.update >= 0,
          "--test-pause-at '" + text + "': expected update:N or valid:N");
  return p;
}

// Announces the pause in SAVE_DIR/paused and waits for SIGINT/SIGTERM, so a
// test can signal the process at a known point; gives up after 60 s so a
// test that never signals cannot hang.
void pause_for_signal(const fs::path& save_dir, const StopSignals& signals) {
  { std::ofstream(save_dir / "paused") << ::getpid() << '\n'; }
  for (int waited_ms = 0; waited_ms < 60000 && !signals.requested(); waited_ms += 5)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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

TrainResult run_training(const TrainOptions& o) {
  require(o.max_tokens > 0, "--max-tokens must be positive");
  require(o.update_freq > 0, "--update-freq must be positive");
  require(o.best_metric == "bleu" || o.best_metric == "loss", "--best-metric must be bleu or loss");
  std::error_code ec;
  fs::create_directories(o.save_dir, ec);
  require(!ec && fs::is_directory(o.save_dir), o.save_dir.string() + ": cannot create the save directory (" +
                                                   ec.message() + ")");
  Communicator& comm = Communicator::world();
  const bool root = comm.is_root();  // rank 0 alone logs and writes files
  TrainLog log(root ? o.log_json : fs::path(), o.quiet || !root);
  StopSignals signals;
  const PausePoint pause = parse_pause_point(o.test_pause_at);
  if (root) remove_abandoned_temporaries(o.save_dir);  // of a process killed while saving
  if (!comm.describe().empty()) log.message(comm.describe());

  // Data (raw text first: a bad corpus fails before any work).
  const ParallelText train_text = read_parallel(o.train_src, o.train_tgt);
  const ParallelText valid_text = read_parallel(o.valid_src, o.valid_tgt);

  // Model, BPE and state: resumed or new.
  const fs::path last_path = o.save_dir / "last.attn", best_path = o.save_dir / "best.attn";
  fs::path resume_from = o.resume;
  if (resume_from.empty() && fs::exists(last_path)) resume_from = last_path;
  std::unique_ptr<model::Seq2Seq> model;
  text::Bpe bpe;
  TrainState state;
  std::unique_ptr<Adam> optimizer;
  if (!resume_from.empty()) {
    model::LoadedModel loaded = model::load_model_file(resume_from);
    if (loaded.model->config().arch != o.model.arch)
      throw Error(resume_from.string() + " holds a '" + loaded.model->config().arch + "' model but --arch is '" +
                  o.model.arch + "'; use another --save-dir or the same --arch");
    state = read_train_state(loaded);
    model = std::move(loaded.model);
    bpe = std::move(loaded.bpe);
    optimizer = std::make_unique<Adam>(model->params(), o.optimizer);
    restore_optimizer(loaded, *optimizer);
    log.message("resuming from " + resume_from.string() + " at update " + std::to_string(state.update) + ", epoch " +
                std::to_string(state.epoch));
  } else {
    const auto t0 = Clock::now();
    std::vector<std::string> lines = train_text.src;
    lines.insert(lines.end(), train_text.tgt.begin(), train_text.tgt.end());
    text::Bpe::Options bpe_options;
    bpe_options.vocab_size = static_cast<std::int32_t>(o.vocab_size);
    bpe = text::Bpe::learn(lines, bpe_options);
    char msg[128];
    std::snprintf(msg, sizeof msg, "learned a joint BPE of %d pieces in %.1f s", bpe.vocab().size(), seconds_since(t0));
    log.message(msg);
    model::ModelConfig config = o.model;
    config.vocab_size = bpe.vocab().size();
    model = std::make_unique<model::Seq2Seq>(config);
    Rng init(o.seed);
    model->initialize(init);
    optimizer = std::make_unique<Adam>(model->params(), o.optimizer);
    state.rng = Rng(o.seed + 1).state();
  }
  log.message("model: " + model->config().arch + ", " + std::to_string(model->parameter_count()) + " parameters");
  log.started(model->config(), model->parameter_count(), state.update, state.elapsed_s);

  const EncodedCorpus train = encode_corpus(train_text, bpe, o.max_len);
  const EncodedCorpus valid = encode_corpus(valid_text, bpe, o.max_len);
  require(!train.examples.empty(), o.train_src.string() + ": no usable sentence pairs (all empty or longer than --max-len)");
  if (train.skipped_empty || train.skipped_long)
    log.message("train: skipped " + std::to_string(train.skipped_empty) + " pairs with an empty side and " +
                std::to_string(train.skipped_long) + " longer than --max-len " + std::to_string(o.max_len));

  Arena arena;
  Rng rng(0);
  rng.set_state(state.rng);
  nn::StepContext ctx{model->params(), arena, rng, true};
  // The gradient all-reduce over ranks, chunk by chunk as backward finishes them.
  const std::vector<std::pair<std::int64_t, std::int64_t>> chunks = model->gradient_chunks();
  Communicator::GradientSum gradient_sum(comm, model->params().grads(), chunks);
  // A rank's second and later batches of an update are computed from zero
  // gradients and added to the sum of the earlier ones (kept in `earlier`),
  // so one process with --update-freq 2 adds g0 + g1 exactly as 2 ranks' sum does.
  std::vector<float> earlier;
  bool add_earlier = false;
  const std::function<void(std::size_t)> chunk_done = [&](std::size_t chunk) {
    if (add_earlier) {
      const auto [begin, end] = chunks[chunk];
      float* g = model->params().grads().data();
      kernels::add(earlier.data() + begin, g + begin, g + begin, end - begin);
    }
    gradient_sum.start(chunk);
  };
  TrainResult result;
  result.last = last_path;
  result.best = best_path;

  const auto run_start = Clock::now();
  const double elapsed_before = state.elapsed_s;
  auto elapsed = [&] { return elapsed_before + seconds_since(run_start); };
  std::int64_t updates_this_run = 0;
  std::int64_t attempts_this_run = 0, bad_skipped = 0;  // update attempts, and those skipped as NaN/Inf
  auto save_last = [&] {
    state.rng = rng.state();
    state.elapsed_s = elapsed();
    if (root) save_checkpoint(last_path, *model, bpe, state, optimizer.get());
  };

  auto run_validation = [&]() -> bool {  // returns true when patience is exhausted
    if (pause.at("valid", state.update)) pause_for_signal(o.save_dir, signals);
    const Validation v = validate(comm, *model, bpe, valid, valid_text.tgt, o.label_smoothing, o.max_tokens, arena);
    state.last_valid_bleu = v.bleu;
    state.last_valid_loss = v.loss;
    LogRecord r;
    r.split = "valid";
    r.update = state.update;
    r.epoch = state.epoch;
    r.loss = v.loss;
    r.nll = v.nll;
    r.bleu = v.bleu;
    r.elapsed_s = elapsed();
    r.target_tokens = state.target_tokens;
    r.lr = inverse_sqrt_lr(o.optimizer, state.update);
    log.valid(r);
    const double metric = o.best_metric == "bleu" ? v.bleu : -v.loss;
    const bool improved = !state.has_best || metric > state.best_metric;
    if (improved) {
      state.has_best = true;
      state.best_metric = metric;
      state.best_update = state.update;
      state.bad_validations = 0;
    } else {
      ++state.bad_validations;
    }
    save_last();
    if (!root) return o.patience > 0 && state.bad_validations >= o.patience;
    if (improved) save_checkpoint(best_path, *model, bpe, state, nullptr);
    if (o.keep_last > 0) {
      save_checkpoint(o.save_dir / ("ckpt." + std::to_string(state.update) + ".attn"), *model, bpe, state,
                      optimizer.get());
      prune_periodic(o.save_dir, o.keep_last);
    }
    return o.patience > 0 && state.bad_validations >= o.patience;
  };

  // Every rank stops at the same update: rank 0's clock and any rank's signal decide.
  auto agreed_elapsed = [&] {
    double t[1] = {root ? elapsed() : 0.0};
    comm.sum(t);
    return t[0];
  };
  auto stop_requested = [&] {
    double requested[1] = {signals.requested() ? 1.0 : 0.0};
    comm.sum(requested);
    return requested[0] > 0.0;
  };
  auto limits_reached = [&] {
    return (o.max_updates > 0 && state.update >= o.max_updates) ||
           (o.max_time_s > 0 && agreed_elapsed() >= o.max_time_s);
  };

  // Progress window for tokens/s.
  auto window_start = Clock::now();
  std::int64_t window_tokens = 0;
  double window_loss = 0.0, window_nll = 0.0;
  std::int64_t window_loss_tokens = 0;

  bool stop = false;
  while (!stop && (o.max_epochs <= 0 || state.epoch <= o.max_epochs) && !limits_reached()) {
    const auto batches = plan_batches(train.examples, o.max_tokens, o.seed, state.epoch, true);
    const std::int64_t n_batches = static_cast<std::int64_t>(batches.size());
    while (state.batch_in_epoch < n_batches) {
      if (pause.at("update", state.update)) pause_for_signal(o.save_dir, signals);
      if (stop_requested() || (o.stop_after_updates > 0 && updates_this_run >= o.stop_after_updates)) {
        save_last();
        log.message("stopped: a resumable checkpoint is in " + last_path.string());
        log.ended(state.update, elapsed(), "interrupted");
        result.interrupted = true;
        result.signal = signals.which();
        result.updates = state.update;
        return result;
      }
      // One update over the next update_freq batches. Rank r computes those at
      // k ≡ r (mod ranks); the gradients are summed over ranks (the last of a
      // rank's batches starts that as backward goes), then averaged per token.
      model->params().zero_grads();
      const std::int64_t first = state.batch_in_epoch, count = std::min(o.update_freq, n_batches - first);
      std::int64_t last_mine = -1;
      for (std::int64_t k = comm.rank(); k < count; k += comm.size()) last_mine = k;
      double sums[3] = {0.0, 0.0, 0.0};  // loss, nll, target tokens
      add_earlier = false;
      for (std::int64_t k = comm.rank(); k < count; k += comm.size()) {
        if (k > comm.rank()) {  // not this rank's first batch of the update
          auto g = model->params().grads();
          if (!add_earlier) earlier.assign(g.begin(), g.end());
          else kernels::add(earlier.data(), g.data(), earlier.data(), static_cast<std::int64_t>(g.size()));
          model->params().zero_grads();
          add_earlier = true;
        }
        arena.reset();
        rng.set_state(batch_rng_state(state.rng.seed, state.epoch, first + k));
        const model::Batch batch = gather_batch(train.examples, batches[first + k]);
        const nn::LossSums batch_sums = model->forward_backward(ctx, batch, o.label_smoothing, true, 1.0f,
                                                                k == last_mine ? &chunk_done : nullptr);
        sums[0] += batch_sums.loss;
        sums[1] += batch_sums.nll;
        sums[2] += static_cast<double>(batch_sums.tokens);
      }
      for (std::size_t chunk = gradient_sum.started(); chunk < chunks.size(); ++chunk) chunk_done(chunk);
      gradient_sum.finish();
      comm.sum(sums);
      state.batch_in_epoch = first + count;
      double loss = sums[0];
      const double nll = sums[1];
      const auto tokens = static_cast<std::int64_t>(sums[2]);
      auto grads = model->params().grads();
      kernels::scale(grads.data(), 1.0f / static_cast<float>(std::max<std::int64_t>(tokens, 1)),
                     static_cast<std::int64_t>(grads.size()));
      ++attempts_this_run;
      if (attempts_this_run >= o.poison_from && attempts_this_run < o.poison_from + o.poison_count)
        loss = std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(loss) || !kernels::all_finite(grads.data(), static_cast<std::int64_t>(grads.size()))) {
        const std::string where = "update " + std::to_string(state.update + 1) + " (epoch " +
                                  std::to_string(state.epoch) + ", batch " + std::to_string(state.batch_in_epoch) +
                                  " of " + std::to_string(n_batches) + ")";
        if (bad_skipped >= o.skip_bad_batches)
          throw Error("the loss or a gradient became NaN/Inf at " + where + "; the last good checkpoint is " +
                      last_path.string() + "; try a lower --lr or --clip-norm, or --skip-bad-batches N to skip a few");
        ++bad_skipped;
        log.message("skipped " + where + ": the loss or a gradient is NaN/Inf (" + std::to_string(bad_skipped) +
                    " of --skip-bad-batches " + std::to_string(o.skip_bad_batches) + ")");
        continue;  // its batches are consumed; no optimizer step, the update number stays
      }
      const Adam::StepInfo step = optimizer->step(model->params());
      ++state.update;
      ++updates_this_run;
      state.target_tokens += tokens;
      window_tokens += tokens;
      window_loss += loss;
      window_nll += nll;
      window_loss_tokens += tokens;

      const bool print = state.update % o.log_every == 0;
      const double window_s = seconds_since(window_start);
      if (print || window_s > 0.5) {
        LogRecord r;
        r.split = "train";
        r.update = state.update;
        r.epoch = state.epoch;
        r.loss = window_loss / static_cast<double>(std::max<std::int64_t>(window_loss_tokens, 1));
        r.nll = window_nll / static_cast<double>(std::max<std::int64_t>(window_loss_tokens, 1));
        r.lr = step.lr;
        r.grad_norm = step.grad_norm;
        r.tokens_per_s = window_s > 0 ? static_cast<double>(window_tokens) / window_s : 0.0;
        r.elapsed_s = elapsed();
        r.epoch_fraction = static_cast<double>(state.batch_in_epoch) / static_cast<double>(n_batches);
        r.target_tokens = state.target_tokens;
        if (o.max_time_s > 0) r.eta_s = o.max_time_s - r.elapsed_s;
        log.train(r, print);
        if (print) {
          window_start = Clock::now();
          window_tokens = 0;
          window_loss = window_nll = 0.0;
          window_loss_tokens = 0;
        }
      }
      if (o.valid_every > 0 && state.update % o.valid_every == 0 && run_validation()) {
        stop = true;
        break;
      }
      if (limits_reached()) {
        stop = true;
        break;
      }
    }
    if (state.batch_in_epoch >= n_batches) {
      ++state.epoch;
      state.batch_in_epoch = 0;
      ++result.epochs_done;
      if (o.valid_every <= 0 && run_validation()) {
        log.message("early stop: no improvement in " + std::to_string(o.patience) + " validations");
        stop = true;
      }
    }
  }
  // A final validation when the run ended mid-epoch (time or update limit), so
  // best reflects the end. A run that had nothing left to do changes nothing.
  if (updates_this_run > 0) {
    if (state.batch_in_epoch > 0 && o.valid_every <= 0) run_validation();
    else save_last();
  }
  result.updates = state.update;
  result.best_metric = state.best_metric;
  if (comm.size() > 1)
    log.message("all-reduce: waited " + format_fixed(gradient_sum.wait_seconds(), 2) + " s for the gradient sums over " +
                std::to_string(updates_this_run) + " updates");
  log.ended(state.update, elapsed(), "finished");
  log.message("done: " + std::to_string(state.update) + " updates; best " + o.best_metric + " " +
              std::to_string(o.best_metric == "bleu" ? state.best_metric : -state.best_metric) + " at update " +
              std::to_string(state.best_update) + "; models in " + o.save_dir.string());
  return result;
}

}  // namespace attn::train
