// attn train: flags → TrainOptions → a Trainer run.
#include <CLI/CLI.hpp>

#include <cmath>
#include <optional>

#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/model/config.h"
#include "attn/train/communicator.h"
#include "attn/train/pause_hooks.h"
#include "attn/train/trainer.h"

namespace attn::cli {

namespace {

struct TrainFlags {
  train::TrainOptions options;
  std::string train_prefix, valid_prefix, src_lang = "src", tgt_lang = "tgt";
  std::string train_src, train_tgt, valid_src, valid_tgt;
  std::string arch = "transformer";
  std::int64_t layers = 0, enc_layers = 0, dec_layers = 0, dim = 0, ffn_dim = 0, heads = 0;
  double dropout = -1, activation_dropout = -1;
  std::optional<double> attention_dropout;  // any value given, NaN too, reaches validate()
  std::string norm;
  // Mechanism options given as flags, by key; the others keep the preset's value.
  nlohmann::json mechanism_options = nlohmann::json::object();
  std::string decoder_mixer;
  bool share_all = true, share_decoder_output = true;
  double max_time_minutes = 0;
  std::string save_dir = "runs/default", log_json, resume;
  bool update_freq_given = false;
  std::string test_pause_at;  // hidden: train/pause_hooks.h
};

// The file for one side of one split: --train-src FILE, else --train PREFIX + ".<src>".
std::string pick(const std::string& explicit_path, const std::string& prefix, const std::string& lang,
                 const std::string& split, const std::string& side) {
  if (!explicit_path.empty()) return explicit_path;
  require(!prefix.empty(), "no " + split + " data: give --" + split + " PREFIX (reads PREFIX." + lang +
                               ") or --" + split + "-" + side + " FILE");
  return prefix + "." + lang;
}

int run(TrainFlags& f) {
  train::TrainOptions& o = f.options;
  o.train_src = pick(f.train_src, f.train_prefix, f.src_lang, "train", "src");
  o.train_tgt = pick(f.train_tgt, f.train_prefix, f.tgt_lang, "train", "tgt");
  o.valid_src = pick(f.valid_src, f.valid_prefix, f.src_lang, "valid", "src");
  o.valid_tgt = pick(f.valid_tgt, f.valid_prefix, f.tgt_lang, "valid", "tgt");
  // A copy task trains without a word of complaint and is never what was meant.
  std::error_code same_error;
  require(o.train_src != o.train_tgt && !std::filesystem::equivalent(o.train_src, o.train_tgt, same_error),
          "the source and target training files are the same file (" + o.train_src.string() +
              "); give the target language with --tgt (e.g. --src de --tgt en)");
  model::ModelConfig& c = o.model;
  c = model::preset(f.arch);
  if (f.layers > 0) c.enc_layers = c.dec_layers = f.layers;
  if (f.enc_layers > 0) c.enc_layers = f.enc_layers;
  if (f.dec_layers > 0) c.dec_layers = f.dec_layers;
  if (f.dim > 0) c.dim = f.dim;
  if (f.ffn_dim > 0) c.ffn_dim = f.ffn_dim;
  if (f.heads > 0) c.heads = f.heads;
  if (f.dropout >= 0) c.dropout = static_cast<float>(f.dropout);
  if (f.activation_dropout >= 0) c.activation_dropout = static_cast<float>(f.activation_dropout);
  if (f.attention_dropout) {
    const double p = *f.attention_dropout;
    require(std::isfinite(p) && p >= 0.0 && p < 1.0,
            "--attention-dropout must be a probability in [0, 1), e.g. 0.1 (got " + std::to_string(p) + ")");
    c.attention_dropout = static_cast<float>(p);
  }
  if (!f.norm.empty()) c.norm = f.norm;
  c.options.update(f.mechanism_options);
  if (!f.decoder_mixer.empty()) c.decoder_mixer = f.decoder_mixer;
  c.share_all_embeddings = f.share_all;
  c.share_decoder_output = f.share_decoder_output;
  c.max_positions = std::max<std::int64_t>(c.max_positions, 2 * o.max_len + 16);
  {
    model::ModelConfig check = c;
    check.vocab_size = 5 + o.vocab_size;  // the vocabulary is not known yet; validate the rest now
    check.validate();
  }
  require(o.vocab_size >= 300, "--vocab-size must be at least 300 (261 fixed pieces + characters)");
  o.max_time_s = f.max_time_minutes * 60.0;
  o.save_dir = f.save_dir;
  // The JSON log lives with the run by default, so `attn report SAVE_DIR` works on every run.
  o.log_json = f.log_json.empty() ? std::filesystem::path(f.save_dir) / "log.jsonl" : std::filesystem::path(f.log_json);
  o.resume = f.resume;
  // Under mpirun each rank computes one batch of every update unless --update-freq says otherwise.
  train::Communicator& comm = train::Communicator::world();
  if (comm.size() > 1 && !f.update_freq_given) o.update_freq = comm.size();
  train::TrainResult r;
  try {
    std::unique_ptr<train::TrainHooks> hooks;
    if (!f.test_pause_at.empty()) hooks = train::pause_hooks(f.test_pause_at, o.save_dir);
    r = train::Trainer(o, hooks.get()).run();
  } catch (const Error& e) {
    if (comm.size() == 1) throw;
    comm.abort(e.what(), 2);  // one rank's error must end every rank, not leave them waiting
  }
  // As a shell reports a process killed by the signal: 128 + its number (130 for SIGINT).
  return r.interrupted ? 128 + (r.signal ? r.signal : 2) : 0;
}

}  // namespace

void add_train_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<TrainFlags>();
  TrainFlags& f = *flags;
  train::TrainOptions& o = f.options;
  CLI::App* sub = app.add_subcommand("train", "Train a model on a parallel corpus");
  sub->footer(
      "Example:\n  attn train --train data/toy/train --valid data/toy/valid --save-dir runs/toy\n"
      "Training resumes automatically from SAVE_DIR/last.attn. Ctrl-C saves a resumable checkpoint.\n"
      "Data-parallel on several processes or machines (a build with make MPI=1; docs/distributed.md):\n"
      "  mpirun -np 4 --hostfile hosts ./attn train ... --threads 2 --save-dir /shared/run");
  add_common_options(*sub, common);
  sub->add_option("--train", f.train_prefix, "training corpus prefix: reads PREFIX.<src> and PREFIX.<tgt>");
  sub->add_option("--valid", f.valid_prefix, "validation corpus prefix");
  sub->add_option("--src,-s", f.src_lang, "source suffix (default: src)");
  sub->add_option("--tgt,-t", f.tgt_lang, "target suffix (default: tgt)");
  sub->add_option("--train-src", f.train_src, "training source file (instead of --train)");
  sub->add_option("--train-tgt", f.train_tgt, "training target file");
  sub->add_option("--valid-src", f.valid_src, "validation source file");
  sub->add_option("--valid-tgt", f.valid_tgt, "validation target file");
  sub->add_option("--arch", f.arch, "architecture: " + model::known_archs())->capture_default_str();
  sub->add_option("--layers", f.layers, "encoder and decoder layers");
  sub->add_option("--enc-layers", f.enc_layers, "encoder layers (preset: 3)");
  sub->add_option("--dec-layers", f.dec_layers, "decoder layers (preset: 3)");
  sub->add_option("--dim", f.dim, "model dimension (preset: 256)");
  sub->add_option("--ffn-dim", f.ffn_dim, "feed-forward inner dimension (preset: 1024)");
  sub->add_option("--heads", f.heads, "attention heads (preset: 4)");
  sub->add_option("--dropout", f.dropout, "dropout on embeddings and residual branches (preset: 0.3)");
  sub->add_option("--activation-dropout", f.activation_dropout, "dropout after the FFN activation (preset: 0)");
  sub->add_option("--attention-dropout", f.attention_dropout,
                  "dropout on the attention weights after the softmax, every mixer and cross-attention; "
                  "Fast-DiSA: keep sqrt(1-P) on each factor (preset: 0)");
  sub->add_option("--norm", f.norm, "pre (default) or post layer normalisation");
  add_mechanism_flags(*sub, f.mechanism_options);
  sub->add_option("--decoder-mixer", f.decoder_mixer, decoder_mixer_help());
  sub->add_flag("--share-all-embeddings,!--no-share-all-embeddings", f.share_all,
                "one embedding table for source, target and output (default: on)");
  sub->add_flag("--share-embeddings,!--no-share-embeddings", f.share_decoder_output,
                "tie the target embedding to the output projection (default: on)");
  sub->add_option("--vocab-size", o.vocab_size, "joint BPE vocabulary size")->capture_default_str();
  sub->add_option("--max-len", o.max_len, "skip training pairs with a side longer than this (subwords)")
      ->capture_default_str();
  sub->add_option("--max-tokens", o.max_tokens, "padded tokens per batch")->capture_default_str();
  sub->add_option("--update-freq", o.update_freq,
                  "batches per update (gradient accumulation; under mpirun -np N the ranks share them, default N)")
      ->capture_default_str()
      ->each([&f](const std::string&) { f.update_freq_given = true; });
  sub->add_option("--max-epochs", o.max_epochs, "stop after this many epochs (0: no limit)");
  sub->add_option("--max-updates", o.max_updates, "stop after this many updates (0: no limit)");
  sub->add_option("--max-time", f.max_time_minutes, "stop after this many minutes of training (0: no limit)");
  sub->add_option("--valid-every", o.valid_every, "validate every N updates (default: every epoch)");
  sub->add_option("--patience", o.patience, "stop after N validations without improvement (0: off)");
  sub->add_option("--skip-bad-batches", o.skip_bad_batches,
                  "skip up to N updates whose loss or gradient is NaN/Inf before stopping with an error")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--best-metric", o.best_metric, "bleu or loss")->capture_default_str();
  sub->add_option("--label-smoothing", o.label_smoothing, "label smoothing ε")->capture_default_str();
  sub->add_option("--lr", o.optimizer.lr, "peak learning rate")->capture_default_str();
  sub->add_option("--warmup", o.optimizer.warmup, "warm-up updates (inverse-sqrt schedule)")->capture_default_str();
  sub->add_option("--clip-norm", o.optimizer.clip_norm, "clip gradients to this global norm (0: off)");
  sub->add_option("--weight-decay", o.optimizer.weight_decay, "AdamW weight decay");
  sub->add_option("--seed", o.seed, "random seed")->capture_default_str();
  sub->add_option("--save-dir", f.save_dir, "where last.attn and best.attn go")->capture_default_str();
  sub->add_option("--keep-last", o.keep_last, "also keep the last N checkpoints ckpt.<update>.attn");
  sub->add_option("--resume", f.resume, "resume from this checkpoint (default: SAVE_DIR/last.attn if present)");
  sub->add_option("--log-json", f.log_json, "append one JSON object per log line to this file (default: SAVE_DIR/log.jsonl, which attn report reads)");
  sub->add_option("--log-every", o.log_every, "updates between log lines")->capture_default_str();
  sub->add_flag("--quiet,-q", o.quiet, "no progress output");
  sub->add_option("--test-pause-at", f.test_pause_at, "for attn's own tests")->group("");
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
