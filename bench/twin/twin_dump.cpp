// twin_dump: what attn computes on one fixed batch, written to a .safetensors
// file for bench/twin/crosscheck.py to compare with the PyTorch twin.
//
//   twin_dump init MODEL.attn [--arch muse --vocab 500 --dim 48 --norm pre --share all ...]
//       a randomly initialised model file (no training), parameters perturbed
//       so that biases, LayerNorm gains and the MUSE kernel gate are not their
//       trivial 0, 1 and uniform; the mechanism flags as `attn train` has them
//       (--muse-kernels, --csan-window, --csan-head-window, --csan-layers,
//       --[no-]disa-gate, --disa-t2t, --decoder-mixer)
//   twin_dump run MODEL.attn OUT.safetensors [--batch batch.json | --seed S --batch-size B]
//       tensors: logprobs [B·Tt, V] (teacher_forced_log_probs), loss / nll /
//       tokens [1] (forward_backward, label-smoothed, summed), grad.<param>
//       for every parameter (grad_scale 1: gradients of the summed loss) and
//       the batch itself (batch.src, batch.src_lengths, batch.tgt_in,
//       batch.tgt_out, batch.tgt_lengths, as floats); metadata: the loss sums
//       in full double precision, label_smoothing, isa, threads, and the
//       greedy and beam-search results on the batch's sources ("greedy",
//       "beam": JSON [{"tokens": [...], "score": s, "logprob": l}, ...]; "search":
//       the SearchOptions used).
//   twin_dump batches TRAINED.attn OUT.json --train-src F --train-tgt F [--seed S --count N --init-out INIT.attn]
//       the first N training batches `attn train --seed S` makes (bench/twin_bench.sh): the corpus
//       encoded with TRAINED.attn's BPE (the one that run learned), cut by attn's batcher
//       (plan_batches, epoch 1, 2, …); INIT.attn: the parameters that run started from
//       (its config, initialize(Rng(seed)), as the Trainer does). OUT.json:
//       {"seed", "max_tokens", "max_len", "config", "batches": [{"sources": [[id]],
//       "targets": [[id]], "target_tokens": n, "epoch": e}], "init_eval_loss": the label-smoothed
//       loss sum of INIT.attn on batch 0 in evaluation mode, for the twin to check}.
// Evaluation mode throughout (StepContext::training false): dropout is the identity.
//
// batch.json: {"sources": [[id, ...], ...], "targets": [[id, ...], ...]}
// (token ids without <s>/</s>, as attn::model::make_batch takes them).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/core/arena.h"
#include "attn/core/cpu.h"
#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/core/safetensors.h"
#include "attn/core/threads.h"
#include "attn/decode/search.h"
#include "attn/model/batch.h"
#include "attn/model/model_file.h"
#include "attn/text/bpe.h"
#include "attn/text/utf8.h"
#include "attn/text/vocab.h"
#include "attn/train/batching.h"
#include "attn/train/corpus.h"

namespace {

using attn::Error;
using attn::require;

// A BPE whose vocabulary has exactly `size` pieces: the fixed ones, then
// single CJK characters (a valid vocabulary needs no merges).
attn::text::Bpe bpe_of_size(std::int64_t size) {
  require(size >= attn::text::kFirstLearned, "--vocab must be at least " + std::to_string(attn::text::kFirstLearned));
  nlohmann::json json = attn::text::Bpe().to_json();
  for (std::int64_t i = attn::text::kFirstLearned; i < size; ++i) {
    std::string piece;
    attn::text::append_utf8(piece, static_cast<char32_t>(0x4E00 + i));
    json["pieces"].push_back(piece);
  }
  return attn::text::Bpe::from_json(json);
}

struct InitOptions {
  std::string out;
  attn::model::ModelConfig config;
  std::string share = "all";
  std::uint64_t seed = 1;
  float perturb = 0.05f;
};

void run_init(InitOptions o) {
  require(o.share == "all" || o.share == "decoder" || o.share == "none", "--share must be all, decoder or none");
  o.config.share_all_embeddings = o.share == "all";
  o.config.share_decoder_output = o.share != "none";
  attn::model::Seq2Seq model(o.config);
  attn::Rng rng(o.seed);
  model.initialize(rng);
  for (float& v : model.params().values()) v += o.perturb * rng.normal();
  attn::model::save_model_file(o.out, model, bpe_of_size(o.config.vocab_size));
  std::printf("%s: arch %s%s, %lld parameters, norm %s, share %s\n", o.out.c_str(), o.config.arch.c_str(),
              o.config.decoder_mixer.empty() ? "" : (", decoder mixer " + o.config.decoder_mixer).c_str(),
              static_cast<long long>(model.parameter_count()),
              std::string(attn::model::norm_name(o.config.norm)).c_str(), o.share.c_str());
}

struct RunOptions {
  std::string model, out, batch_file, isa;
  std::uint64_t seed = 1;
  int batch_size = 4, threads = 0, beam = 4;
  float label_smoothing = 0.1f;
};

using Sentences = std::vector<std::vector<std::int32_t>>;

void read_batch_file(const std::string& path, std::int64_t vocab, Sentences& sources, Sentences& targets) {
  std::ifstream in(path);
  require(in.good(), path + ": cannot open the batch file");
  nlohmann::json j;
  try {
    in >> j;
    sources = j.at("sources").get<Sentences>();
    targets = j.at("targets").get<Sentences>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": " + e.what());
  }
  require(!sources.empty() && sources.size() == targets.size(),
          path + ": sources and targets must be non-empty and pair up");
  for (const Sentences* side : {&sources, &targets})
    for (const auto& s : *side)
      for (std::int32_t id : s)
        require(id >= 0 && id < vocab, path + ": token id " + std::to_string(id) + " is outside the vocabulary");
}

// Lengths 1..12 (a target may be empty: then it is just </s>), ids from the learned range.
void random_batch(std::uint64_t seed, int size, std::int64_t vocab, Sentences& sources, Sentences& targets) {
  attn::Rng rng(seed);
  auto sentence = [&](std::uint64_t min_len) {
    std::vector<std::int32_t> s(min_len + rng.below(13 - min_len));
    for (auto& id : s)
      id = static_cast<std::int32_t>(attn::text::kNumSpecials + rng.below(vocab - attn::text::kNumSpecials));
    return s;
  };
  for (int i = 0; i < size; ++i) {
    sources.push_back(sentence(1));
    targets.push_back(sentence(0));
  }
}

attn::Tensor ids_as_floats(const std::vector<std::int32_t>& ids, attn::Shape shape) {
  attn::Tensor t = attn::Tensor::zeros(shape);
  for (std::size_t i = 0; i < ids.size(); ++i) t.data()[i] = static_cast<float>(ids[i]);
  return t;
}

nlohmann::json hypotheses_json(const std::vector<attn::decode::Hypothesis>& hyps) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : hyps) out.push_back({{"tokens", h.tokens}, {"score", h.score}, {"logprob", h.logprob}});
  return out;
}

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void run_dump(const RunOptions& o) {
  if (!o.isa.empty()) attn::set_active_isa(attn::parse_isa(o.isa));
  if (o.threads > 0) attn::set_threads(o.threads);
  attn::model::LoadedModel loaded = attn::model::load_model_file(o.model, attn::model::ComputeType::fp32);
  attn::model::Seq2Seq& model = *loaded.model;
  const std::int64_t vocab = model.config().vocab_size;

  Sentences sources, targets;
  if (o.batch_file.empty())
    random_batch(o.seed, o.batch_size, vocab, sources, targets);
  else
    read_batch_file(o.batch_file, vocab, sources, targets);
  const attn::model::Batch batch = attn::model::make_batch(sources, targets);
  const std::int64_t B = batch.size, ts = batch.src_len, tt = batch.tgt_len;

  attn::Arena arena;
  attn::Rng rng(0);
  attn::nn::StepContext ctx{model.params(), arena, rng, false};
  attn::Tensor logprobs = attn::Tensor::zeros({B * tt, vocab});
  model.teacher_forced_log_probs(ctx, batch, logprobs.data());
  arena.reset();
  model.params().zero_grads();
  const attn::nn::LossSums sums = model.forward_backward(ctx, batch, o.label_smoothing, true, 1.0f);

  arena.reset();
  attn::decode::SearchOptions search;
  search.beam = o.beam;
  const std::vector<attn::decode::Hypothesis> greedy = attn::decode::greedy_search(ctx, model, sources, search);
  arena.reset();
  std::vector<attn::decode::Hypothesis> beam;
  for (auto& best : attn::decode::beam_search(ctx, model, sources, search)) beam.push_back(best.at(0));

  const float loss = static_cast<float>(sums.loss), nll = static_cast<float>(sums.nll),
              tokens = static_cast<float>(sums.tokens);
  const attn::Tensor src = ids_as_floats(batch.src, {B, ts}), src_lengths = ids_as_floats(batch.src_lengths, {B}),
                     tgt_in = ids_as_floats(batch.tgt_in, {B, tt}), tgt_out = ids_as_floats(batch.tgt_out, {B, tt}),
                     tgt_lengths = ids_as_floats(batch.tgt_lengths, {B});
  std::vector<attn::TensorRef> tensors = {
      {"logprobs", {B * tt, vocab}, logprobs.span()},
      {"loss", {1}, {&loss, 1}},
      {"nll", {1}, {&nll, 1}},
      {"tokens", {1}, {&tokens, 1}},
      {"batch.src", {B, ts}, src.span()},
      {"batch.src_lengths", {B}, src_lengths.span()},
      {"batch.tgt_in", {B, tt}, tgt_in.span()},
      {"batch.tgt_out", {B, tt}, tgt_out.span()},
      {"batch.tgt_lengths", {B}, tgt_lengths.span()},
  };
  const attn::nn::ParamStore& params = model.params();
  for (const attn::nn::ParamInfo& p : params.entries())
    tensors.push_back({"grad." + p.name, p.shape,
                       params.grads().subspan(static_cast<std::size_t>(p.offset),
                                              static_cast<std::size_t>(p.shape.numel()))});
  const std::map<std::string, std::string> metadata = {
      {"config", model.config().to_json().dump()},
      {"loss", exact(sums.loss)},
      {"nll", exact(sums.nll)},
      {"tokens", std::to_string(sums.tokens)},
      {"label_smoothing", exact(o.label_smoothing)},
      {"isa", std::string(attn::isa_name(attn::active_isa()))},
      {"threads", std::to_string(attn::num_threads())},
      {"greedy", hypotheses_json(greedy).dump()},
      {"beam", hypotheses_json(beam).dump()},
      {"search", nlohmann::json{{"beam", search.beam},
                                {"lenpen", search.lenpen},
                                {"max_len_a", search.max_len_a},
                                {"max_len_b", search.max_len_b}}
                     .dump()},
  };
  attn::write_safetensors(o.out, tensors, metadata);
  std::printf("%s: B=%lld Ts=%lld Tt=%lld, %lld target tokens, loss %.6f, isa %s\n", o.out.c_str(),
              static_cast<long long>(B), static_cast<long long>(ts), static_cast<long long>(tt),
              static_cast<long long>(sums.tokens), sums.loss, std::string(attn::isa_name(attn::active_isa())).c_str());
}

struct BatchesOptions {
  std::string trained, out, init_out, train_src, train_tgt;
  std::uint64_t seed = 1;
  std::int64_t count = 50, max_tokens = 4096, max_len = 256;
  float label_smoothing = 0.1f;
};

// The batches of an attn::train::Trainer run for a fresh run with these options.
void run_batches(const BatchesOptions& o) {
  require(o.count >= 1, "--count must be at least 1");
  attn::model::LoadedModel trained = attn::model::load_model_file(o.trained, attn::model::ComputeType::fp32);
  const attn::model::ModelConfig config = trained.model->config();
  attn::model::Seq2Seq model(config);
  attn::Rng init(o.seed);
  model.initialize(init);
  if (!o.init_out.empty()) attn::model::save_model_file(o.init_out, model, trained.bpe);

  const attn::train::EncodedCorpus corpus = attn::train::encode_corpus(
      attn::train::read_parallel(o.train_src, o.train_tgt, "training"), trained.bpe, o.max_len);
  require(!corpus.examples.empty(), o.train_src + ": no usable sentence pairs");
  nlohmann::json batches = nlohmann::json::array();
  for (std::int64_t epoch = 1; static_cast<std::int64_t>(batches.size()) < o.count; ++epoch) {
    for (const attn::train::BatchIndices& indices :
         attn::train::plan_batches(corpus.examples, o.max_tokens, o.seed, epoch, true)) {
      if (static_cast<std::int64_t>(batches.size()) == o.count) break;
      Sentences sources, targets;
      std::int64_t tokens = 0;
      for (std::int64_t i : indices) {
        sources.push_back(corpus.examples[static_cast<std::size_t>(i)].src);
        targets.push_back(corpus.examples[static_cast<std::size_t>(i)].tgt);
        tokens += static_cast<std::int64_t>(targets.back().size()) + 1;
      }
      batches.push_back({{"sources", sources}, {"targets", targets}, {"target_tokens", tokens}, {"epoch", epoch}});
    }
  }

  // The loss of the initial model on batch 0 without dropout: the twin loads
  // INIT.attn and must get the same, which checks parameters and batch at once.
  const attn::model::Batch first =
      attn::model::make_batch(batches[0]["sources"].get<Sentences>(), batches[0]["targets"].get<Sentences>());
  attn::Arena arena;
  attn::Rng rng(0);
  attn::nn::StepContext ctx{model.params(), arena, rng, false};
  const attn::nn::LossSums sums = model.forward_backward(ctx, first, o.label_smoothing, false, 0.0f);

  const nlohmann::json out = {{"seed", o.seed},
                              {"max_tokens", o.max_tokens},
                              {"max_len", o.max_len},
                              {"config", config.to_json()},
                              {"label_smoothing", o.label_smoothing},
                              {"init_eval_loss", sums.loss},
                              {"init_eval_tokens", sums.tokens},
                              {"batches", batches}};
  std::ofstream file(o.out);
  file << out.dump() << '\n';
  require(file.good(), o.out + ": cannot write");
  std::printf("%s: %zu batches of ≤ %lld padded tokens, %zu training pairs, seed %llu%s\n", o.out.c_str(),
              batches.size(), static_cast<long long>(o.max_tokens), corpus.examples.size(),
              static_cast<unsigned long long>(o.seed),
              o.init_out.empty() ? "" : (", initial model " + o.init_out).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"twin_dump: what attn computes, for the PyTorch twin (bench/twin/crosscheck.py, bench/twin_bench.sh)"};
  app.require_subcommand(1);

  InitOptions init;
  CLI::App* init_cmd = app.add_subcommand("init", "write a randomly initialised model file");
  init.config.vocab_size = 500;
  init.config.dim = 48;
  init.config.ffn_dim = 96;
  init.config.heads = 4;
  init.config.enc_layers = 2;
  init.config.dec_layers = 2;
  init.config.max_positions = 64;
  init.config.activation_dropout = 0.1f;
  init_cmd->add_option("out", init.out, "model file to write")->required();
  init_cmd->add_option("--vocab", init.config.vocab_size, "vocabulary size (>= 261)")->capture_default_str();
  init_cmd->add_option("--dim", init.config.dim)->capture_default_str();
  init_cmd->add_option("--ffn-dim", init.config.ffn_dim)->capture_default_str();
  init_cmd->add_option("--heads", init.config.heads)->capture_default_str();
  init_cmd->add_option("--enc-layers", init.config.enc_layers)->capture_default_str();
  init_cmd->add_option("--dec-layers", init.config.dec_layers)->capture_default_str();
  init_cmd->add_option("--max-positions", init.config.max_positions)->capture_default_str();
  init_cmd->add_option("--norm", init.config.norm, "pre | post")
      ->transform(CLI::CheckedTransformer(std::map<std::string, attn::model::Norm>{{"pre", attn::model::Norm::pre},
                                                                                   {"post", attn::model::Norm::post}}));
  init_cmd->add_option("--share", init.share, "embeddings: all (one table) | decoder (target tied to output) | none")
      ->capture_default_str();
  init_cmd->add_option("--arch", init.config.arch, attn::model::known_archs())->capture_default_str();
  attn::cli::add_mechanism_flags(*init_cmd, init.config.options);
  init_cmd->add_option("--decoder-mixer", init.config.decoder_mixer, attn::cli::decoder_mixer_help());
  init_cmd->add_option("--seed", init.seed)->capture_default_str();
  init_cmd->add_option("--perturb", init.perturb, "std of the noise added to every parameter")->capture_default_str();

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "dump log-probs, loss and gradients on one batch");
  run_cmd->add_option("model", run.model, "attn model file")->required();
  run_cmd->add_option("out", run.out, ".safetensors file to write")->required();
  run_cmd->add_option("--batch", run.batch_file, "JSON {\"sources\": [[ids]], \"targets\": [[ids]]}");
  run_cmd->add_option("--seed", run.seed, "random batch when no --batch")->capture_default_str();
  run_cmd->add_option("--batch-size", run.batch_size)->capture_default_str();
  run_cmd->add_option("--label-smoothing", run.label_smoothing)->capture_default_str();
  run_cmd->add_option("--beam", run.beam, "beam size of the beam-search result")->capture_default_str();
  run_cmd->add_option("--isa", run.isa, "scalar | avx2 | avx512 (default: the best this CPU has)");
  run_cmd->add_option("--threads", run.threads, "OpenMP threads (0: all)")->capture_default_str();

  BatchesOptions batches;
  CLI::App* batches_cmd = app.add_subcommand("batches", "the first training batches and initial model of `attn train`");
  batches_cmd->add_option("trained", batches.trained, "a model file that `attn train` wrote (its config and BPE)")
      ->required();
  batches_cmd->add_option("out", batches.out, "JSON file to write")->required();
  batches_cmd->add_option("--train-src", batches.train_src, "training source file")->required();
  batches_cmd->add_option("--train-tgt", batches.train_tgt, "training target file")->required();
  batches_cmd->add_option("--seed", batches.seed, "attn train --seed")->capture_default_str();
  batches_cmd->add_option("--count", batches.count, "batches to write")->capture_default_str();
  batches_cmd->add_option("--max-tokens", batches.max_tokens, "attn train --max-tokens")->capture_default_str();
  batches_cmd->add_option("--max-len", batches.max_len, "attn train --max-len")->capture_default_str();
  batches_cmd->add_option("--label-smoothing", batches.label_smoothing)->capture_default_str();
  batches_cmd->add_option("--init-out", batches.init_out, "write the initial model here");

  try {
    app.parse(argc, argv);
    if (*init_cmd) run_init(init);
    if (*run_cmd) run_dump(run);
    if (*batches_cmd) run_batches(batches);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twin_dump: %s\n", e.what());
    return 2;
  }
  return 0;
}
