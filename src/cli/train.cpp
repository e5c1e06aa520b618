// attn train: flags → TrainOptions → a Trainer session.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/cli/greedy_validation.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
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
  // Model flags: the preset's value unless given (`command->count`).
  std::int64_t layers = 0, enc_layers = 0, dec_layers = 0, dim = 0, ffn_dim = 0, heads = 0;
  double dropout = 0, activation_dropout = 0, attention_dropout = 0;
  std::string norm, best_metric = "bleu", precision = "fp32";  // parsed into o's enums by run()
  // Mechanism options given as flags, by key; the others keep the preset's value.
  nlohmann::json mechanism_options = nlohmann::json::object();
  std::string decoder_mixer;
  bool share_all = true, share_decoder_output = true;
  double max_time_minutes = 0;
  std::string save_dir = "runs/default", log_json, resume;
  bool update_freq_given = false;
  std::string test_pause_at;  // hidden: train/pause_hooks.h
  CLI::App* command = nullptr;
};

// The flags that shape the model, by the config key each sets (--layers sets two).
constexpr std::pair<const char*, const char*> kModelFlags[] = {
    {"--layers", "enc_layers"},
    {"--layers", "dec_layers"},
    {"--enc-layers", "enc_layers"},
    {"--dec-layers", "dec_layers"},
    {"--dim", "dim"},
    {"--ffn-dim", "ffn_dim"},
    {"--heads", "heads"},
    {"--dropout", "dropout"},
    {"--activation-dropout", "activation_dropout"},
    {"--attention-dropout", "attention_dropout"},
    {"--norm", "norm"},
    {"--decoder-mixer", "decoder_mixer"},
    {"--share-all-embeddings", "share_all_embeddings"},
    {"--share-embeddings", "share_decoder_output"},
};

// The file for one side of one split: --train-src FILE, else --train PREFIX + ".<src>", or its ".gz"
// when only that exists (as Multi30k ships it; text/gzip.h reads it as its content).
std::string pick(const std::string& explicit_path, const std::string& prefix, const std::string& lang,
                 const std::string& split, const std::string& side) {
  if (!explicit_path.empty()) return explicit_path;
  require(!prefix.empty(), "no " + split + " data: give --" + split + " PREFIX (reads PREFIX." + lang + ") or --" +
                               split + "-" + side + " FILE");
  const std::string plain = prefix + "." + lang, packed = plain + ".gz";
  std::error_code error;
  if (!std::filesystem::exists(plain, error) && std::filesystem::exists(packed, error)) return packed;
  return plain;
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
  // The log (--log-json, or SAVE_DIR/log.jsonl) passes the outputs' rule now, not after the corpus is read
  // and the BPE learned: never a corpus file, the checkpoint resumed, a model file, or a file the run
  // writes itself. In a save dir that does not exist yet it is created with it.
  namespace fs = std::filesystem;
  require(!f.save_dir.empty(), "--save-dir: give a folder name");
  const fs::path save_dir = f.save_dir;
  const std::string log = f.log_json.empty() ? (save_dir / "log.jsonl").string() : f.log_json;
  const auto absolute_dir = [](fs::path p) {
    if (p.empty()) p = ".";
    fs::path n = fs::absolute(p).lexically_normal();
    return n.has_filename() ? n : n.parent_path();
  };
  NamedFile log_file{log, f.log_json.empty() ? "the log" : "--log-json"};
  log_file.in_new_dir = absolute_dir(fs::path(log).parent_path()) == absolute_dir(save_dir);
  std::vector<NamedFile> read{{o.train_src.string(), "the training source"},
                              {o.train_tgt.string(), "the training target"},
                              {o.valid_src.string(), "the validation source"},
                              {o.valid_tgt.string(), "the validation target"}};
  if (!f.resume.empty()) read.push_back({f.resume, "--resume"});
  preflight_outputs(std::array{log_file}, read,
                    std::array{NamedFile{(save_dir / "last.attn").string(), "the run's checkpoint"},
                               NamedFile{(save_dir / "best.attn").string(), "the run's best model"},
                               NamedFile{(save_dir / "attn.lock").string(), "the save dir's lock"}});
  model::ModelConfig& c = o.model;
  c = model::preset(f.arch);
  const auto given = [&f](const char* flag) { return f.command->count(flag) > 0; };
  o.arch_given = given("--arch");
  if (given("--layers")) c.enc_layers = c.dec_layers = f.layers;
  if (given("--enc-layers")) c.enc_layers = f.enc_layers;
  if (given("--dec-layers")) c.dec_layers = f.dec_layers;
  if (given("--dim")) c.dim = f.dim;
  if (given("--ffn-dim")) c.ffn_dim = f.ffn_dim;
  if (given("--heads")) c.heads = f.heads;
  if (given("--dropout")) c.dropout = static_cast<float>(f.dropout);
  if (given("--activation-dropout")) c.activation_dropout = static_cast<float>(f.activation_dropout);
  if (given("--attention-dropout")) c.attention_dropout = static_cast<float>(f.attention_dropout);
  if (given("--norm")) c.norm = *model::parse_norm(f.norm);  // its IsMember check allows no other text
  c.options.update(f.mechanism_options);
  if (given("--decoder-mixer")) c.decoder_mixer = f.decoder_mixer;
  c.share_all_embeddings = f.share_all;
  c.share_decoder_output = f.share_decoder_output;
  // What a resumed checkpoint must hold: every model flag typed, by its config key.
  const nlohmann::json config = train::every_value(c);
  // A key set by two flags typed (--layers 1 --enc-layers 2) holds the later one's value: only that flag is
  // compared for it, so each flag is named with the value typed.
  for (std::size_t i = 0; i < std::size(kModelFlags); ++i) {
    const auto& [flag, key] = kModelFlags[i];
    const auto overridden = std::any_of(std::begin(kModelFlags) + static_cast<std::ptrdiff_t>(i) + 1,
                                        std::end(kModelFlags), [&, key = key](const auto& later) {
                                          return std::string_view(later.second) == key && given(later.first);
                                        });
    if (given(flag) && !overridden) o.model_flags_given.push_back({flag, key, config.at(key)});
  }
  for (const auto& [key, value] : f.mechanism_options.items())
    o.model_flags_given.push_back({std::string(nn::find_option(key)->flag), key, value});
  if (given("--vocab-size")) o.model_flags_given.push_back({"--vocab-size", "vocab_size", o.vocab_size});
  c.max_positions = std::max<std::int64_t>(c.max_positions, 2 * o.max_len + 16);
  {
    model::ModelConfig check = c;
    check.vocab_size = 5 + o.vocab_size;  // the vocabulary is not known yet; validate the rest now
    check.validate();
  }
  // The flags' IsMember checks allow no other text.
  o.best_metric = *train::parse_best_metric(f.best_metric);
  o.precision = *kernels::parse_compute_type(f.precision);
  o.max_time_s = f.max_time_minutes * 60.0;
  o.save_dir = f.save_dir;
  // The JSON log lives with the run by default, so `attn report SAVE_DIR` works on every run.
  o.log_json = log;
  o.resume = f.resume;
  // Under mpirun each rank computes one batch of every update unless --update-freq says otherwise.
  train::Communicator& comm = train::Communicator::world();
  if (comm.size() > 1 && !f.update_freq_given) o.update_freq = comm.size();
  train::TrainResult r;
  try {
    std::unique_ptr<train::TrainHooks> hooks;
    if (!f.test_pause_at.empty()) hooks = train::pause_hooks(f.test_pause_at, o.save_dir);
    r = train::Trainer(o, greedy_validation_translator(), hooks.get()).train();
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
  sub->footer("Example:\n  attn train --train data/toy/train --valid data/toy/valid --save-dir runs/toy\n"
              "Training resumes automatically from SAVE_DIR/last.attn. Ctrl-C saves a resumable checkpoint. "
              "Data-parallel on several processes or machines (a build with make MPI=1; docs/distributed.md):\n"
              "  mpirun -np 4 --hostfile hosts ./attn train ... --threads 2 --save-dir /shared/run");
  f.command = sub;
  sub->option_defaults()->group("Data");
  sub->add_option("--train", f.train_prefix,
                  "training corpus prefix: reads PREFIX.<src> and PREFIX.<tgt> (or their .gz when only those exist)");
  sub->add_option("--valid", f.valid_prefix, "validation corpus prefix (as --train)");
  sub->add_option("--src,-s", f.src_lang, "source suffix (default: src)");
  sub->add_option("--tgt,-t", f.tgt_lang, "target suffix (default: tgt)");
  sub->add_option("--train-src", f.train_src, "training source file (instead of --train)");
  sub->add_option("--train-tgt", f.train_tgt, "training target file");
  sub->add_option("--valid-src", f.valid_src, "validation source file");
  sub->add_option("--valid-tgt", f.valid_tgt, "validation target file");
  sub->add_option("--vocab-size", o.vocab_size, "joint BPE vocabulary size")
      ->capture_default_str()
      ->check(bounded(within(300, 1000000)));
  sub->add_option("--max-len", o.max_len, "skip training pairs with a side longer than this (subwords)")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--join-pairs", o.join_pairs,
                  "build each training example from 1…K consecutive pairs joined (drawn per epoch from the seed); "
                  "validation then also scores the validation set joined K at a time")
      ->capture_default_str()
      ->check(bounded(within(1, 64)));
  sub->add_option("--drop-final-stop", o.drop_final_stop,
                  "share of training examples whose source loses its final . ! or ? (drawn per epoch from the seed), "
                  "so a model trained with --join-pairs still ends where a source without a stop ends; 0.2 is "
                  "measured in docs/claims.md")
      ->capture_default_str()
      ->check(bounded(within(0.0, 1.0)));
  sub->option_defaults()->group("Model (each flag overrides the --arch preset)");
  sub->add_option("--arch", f.arch, "architecture: " + model::known_archs())->capture_default_str();
  sub->add_option("--layers", f.layers, "encoder and decoder layers")->check(bounded(within(1, 64)));
  sub->add_option("--enc-layers", f.enc_layers, "encoder layers (preset: 3)")->check(bounded(within(1, 64)));
  sub->add_option("--dec-layers", f.dec_layers, "decoder layers (preset: 3)")->check(bounded(within(1, 64)));
  sub->add_option("--dim", f.dim, "model dimension (preset: 256)")->check(bounded(within(1, 16384)));
  sub->add_option("--ffn-dim", f.ffn_dim, "feed-forward inner dimension (preset: 1024)")
      ->check(bounded(within(1, 65536)));
  sub->add_option("--heads", f.heads, "attention heads (preset: 4)")->check(bounded(within(1, 256)));
  sub->add_option("--dropout", f.dropout, "dropout on embeddings and residual branches (preset: 0.3)")
      ->check(bounded(probability));
  sub->add_option("--activation-dropout", f.activation_dropout, "dropout after the FFN activation (preset: 0)")
      ->check(bounded(probability));
  sub->add_option("--attention-dropout", f.attention_dropout,
                  "dropout on the attention weights after the softmax, every mixer and cross-attention; "
                  "Fast-DiSA: keep sqrt(1-P) on each factor (preset: 0)")
      ->check(bounded(probability));
  sub->add_option("--norm", f.norm, "layer normalisation before each sublayer (pre) or after its residual sum (post)")
      ->check(CLI::IsMember({"pre", "post"}));
  sub->add_option("--decoder-mixer", f.decoder_mixer, decoder_mixer_help());
  sub->add_flag("--share-all-embeddings,!--no-share-all-embeddings", f.share_all,
                "one embedding table for source, target and output (default: on)");
  sub->add_flag("--share-embeddings,!--no-share-embeddings", f.share_decoder_output,
                "tie the target embedding to the output projection (default: on)");
  sub->option_defaults()->group("Mechanisms (each flag overrides the --arch preset)");
  add_mechanism_flags(*sub, f.mechanism_options);
  sub->option_defaults()->group("Training");
  sub->add_option("--max-tokens", o.max_tokens, "padded tokens per batch")
      ->capture_default_str()
      ->check(bounded(within(1, 1e8)));
  sub->add_option("--update-freq", o.update_freq,
                  "batches per update (gradient accumulation; under mpirun -np N the ranks share them, default N)")
      ->capture_default_str()
      ->each([&f](const std::string&) { f.update_freq_given = true; })
      ->check(bounded(within(1, 10000)));
  sub->add_option("--lr", o.optimizer.lr, "peak learning rate")->capture_default_str()->check(bounded(above(0, 10)));
  sub->add_option("--warmup", o.optimizer.warmup, "warm-up updates (inverse-sqrt schedule)")
      ->capture_default_str()
      ->check(bounded(within(0, 1e9)));
  sub->add_option("--label-smoothing", o.label_smoothing, "label smoothing ε")
      ->capture_default_str()
      ->check(bounded(probability));
  sub->add_option("--clip-norm", o.optimizer.clip_norm, "clip gradients to this global norm (0: off)")
      ->check(bounded(within(0, 1e9)));
  sub->add_option("--weight-decay", o.optimizer.weight_decay, "AdamW weight decay")->check(bounded(within(0, 10)));
  sub->add_option("--precision", f.precision,
                  "fp32, or bf16: matrix products on bf16 operands with FP32 sums (weights, optimizer, norms, "
                  "softmax and loss stay FP32; a checkpoint resumes in either)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  sub->add_option("--seed", o.seed, "random seed")->capture_default_str()->check(bounded(within(0, 1.8e19)));
  sub->add_option("--skip-bad-batches", o.skip_bad_batches,
                  "skip up to N updates whose loss or gradient is NaN/Inf before stopping with an error")
      ->capture_default_str()
      ->check(bounded(within(0, 1e9)));
  sub->option_defaults()->group("Validation and stopping");
  sub->add_option("--valid-every", o.valid_every, "validate every N updates (default: every epoch)")
      ->check(bounded(within(0, 1e12)));
  sub->add_option("--best-metric", f.best_metric,
                  "bleu or loss (with --join-pairs K > 1: the mean over single and joined validation)")
      ->check(CLI::IsMember({"bleu", "loss"}))
      ->capture_default_str();
  sub->add_option("--patience", o.patience, "stop after N validations without improvement (0: off)")
      ->check(bounded(within(0, 1e9)));
  sub->add_option("--max-epochs", o.max_epochs, "stop after this many epochs (0: no limit)")
      ->check(bounded(within(0, 1e9)));
  sub->add_option("--max-updates", o.max_updates, "stop after this many updates (0: no limit)")
      ->check(bounded(within(0, 1e12)));
  sub->add_option("--max-time", f.max_time_minutes, "stop after this many minutes of training (0: no limit)")
      ->check(bounded(within(0, 1e7)));
  sub->option_defaults()->group("Output");
  sub->add_option("--save-dir", f.save_dir, "where last.attn and best.attn go")->capture_default_str();
  sub->add_option("--keep-last", o.keep_last, "also keep the last N checkpoints ckpt.<update>.attn")
      ->check(bounded(within(0, 1e6)));
  sub->add_option("--resume", f.resume, "resume from this checkpoint (default: SAVE_DIR/last.attn if present)");
  sub->add_option(
      "--log-json", f.log_json,
      "append one JSON object per log line to this file (default: SAVE_DIR/log.jsonl, which attn report reads)");
  sub->add_option("--log-every", o.log_every, "updates between log lines")
      ->capture_default_str()
      ->check(bounded(within(1, 1e9)));
  sub->add_flag("--quiet,-q", o.quiet, "no progress output");
  sub->option_defaults()->group("Resources");
  add_common_options(*sub, common);
  sub->add_option("--test-pause-at", f.test_pause_at, "for attn's own tests")->group("");
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
