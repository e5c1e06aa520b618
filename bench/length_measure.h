// bench_length's measurements of one cell, an arch at a length T: a full
// training step (time and the step arena's high-water), the encoder's
// layer-0 self-attention mixer alone (memory), and beam search forced to
// outputs of T words (time per sentence); each timed part measured again
// while other processes ran, keeping the quietest attempt. Options holds
// the command line's sizes and budgets.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "length_cost.h"
#include "length_machine.h"
#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/token_mixer.h"
#include "attn/text/vocab.h"
#include "attn/train/optimizer.h"

namespace attn::bench::length {

inline constexpr std::int64_t kVocab = 8000;
inline constexpr int kBeam = 5;

// The command line: the table's archs and lengths, each cell's sizes and budgets.
struct Options {
  std::vector<std::string> archs = {"transformer", "muse", "muse-simple", "convsan",    "convsan2d",
                                    "fastdisa",    "disa", "lightconv",   "dynamicconv"};
  std::vector<std::int64_t> lengths = {16, 64, 256, 1024, 2048};
  std::int64_t tokens = 4096;  // target tokens per training batch
  int steps = 3;
  int threads = 2;
  double max_gb = 16.0;
  int decode_max = 8;             // most sentences in the decode batch
  int decode_runs = 3;            // timed decodes of the batch (median)
  double decode_budget_s = 60.0;  // fewer sentences when a decode would take longer
  int retries = 2;                // more attempts of a part measured while other processes ran
  std::string json_path;
};

// ---------------------------------------------------------------------------
// The measurements

inline std::vector<std::vector<std::int32_t>> random_sentences(std::int64_t count, std::int64_t len, Rng& rng) {
  std::vector<std::vector<std::int32_t>> sentences(static_cast<std::size_t>(count));
  for (auto& s : sentences) {
    s.resize(static_cast<std::size_t>(len));
    for (auto& id : s) id = 4 + static_cast<std::int32_t>(rng.below(kVocab - 10));  // no specials
  }
  return sentences;
}

struct TrainResult {
  double median_ms = 0, tokens_per_s = 0, step_bytes = 0;
};

// One full training step on `batch` pairs of T source and T target tokens
// (T − 1 words and </s>), median of `steps` after one warm-up.
inline TrainResult measure_training(const model::ModelConfig& config, std::int64_t batch, std::int64_t t, int steps) {
  model::Seq2Seq model(config);
  Rng init(1);
  model.initialize(init);
  train::Adam adam(model.params(), {});
  Rng data(2);
  const auto src = random_sentences(batch, t, data);
  const auto tgt = random_sentences(batch, t - 1, data);
  const model::Batch b = model::make_batch(src, tgt);
  Arena arena;
  Rng rng(3);
  nn::StepContext ctx{model.params(), arena, rng, true};
  const float grad_scale = 1.0f / static_cast<float>(b.target_tokens());
  std::vector<double> ms;
  for (int s = 0; s <= steps; ++s) {
    const auto t0 = Clock::now();
    arena.reset();
    model.params().zero_grads();
    model.forward_backward(ctx, b, 0.1f, true, grad_scale);
    adam.step(model.params());
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (s > 0) ms.push_back(elapsed);  // the first step grows the arena and warms the caches
  }
  TrainResult r;
  r.median_ms = bench::median(ms);
  r.tokens_per_s = 1000.0 * static_cast<double>(b.target_tokens()) / r.median_ms;
  r.step_bytes = 4.0 * static_cast<double>(arena.high_water_floats());
  return r;
}

// The encoder's layer-0 self-attention mixer alone: forward + backward over
// [batch, T] in training mode; the high-water of its own arena in bytes.
inline double measure_attention_bytes(const model::ModelConfig& config, std::int64_t batch, std::int64_t t) {
  nn::ParamStore params;
  const std::unique_ptr<nn::TokenMixer> mixer = nn::make_mixer(params, "enc.0.self_attn", config.encoder_mixer(0));
  params.allocate();
  Rng init(4);
  params.initialize(init);
  params.zero_grads();  // gradients come when asked for: the backward below adds into them
  const std::int64_t rows = batch * t, d = config.dim;
  const std::vector<float> x = bench::random_floats(static_cast<std::size_t>(rows * d), 5);   // [B·T, d]
  const std::vector<float> dy = bench::random_floats(static_cast<std::size_t>(rows * d), 6);  // [B·T, d]
  std::vector<float> y(static_cast<std::size_t>(rows * d)), dx(static_cast<std::size_t>(rows * d));
  const std::vector<std::int32_t> lengths(static_cast<std::size_t>(batch), static_cast<std::int32_t>(t));
  Arena arena;
  Rng rng(7);
  nn::StepContext ctx{params, arena, rng, true};
  std::unique_ptr<nn::TokenMixer::Saved> saved;
  mixer->forward(ctx, x.data(), y.data(), batch, t, lengths.data(), saved);
  mixer->backward(ctx, *saved, dy.data(), dx.data());
  return 4.0 * static_cast<double>(arena.high_water_floats());
}

// decode::beam_search has a maximum length (max_len_a · source + max_len_b)
// but no minimum, and a random model may end a hypothesis at any step. So the
// decode model's weights make </s> impossible: feature 0 of the decoder's
// final LayerNorm is pinned to 1 (gain 0, bias 1) and the tied output row of
// </s> is −50 there and 0 elsewhere, so log p(</s>) ≈ −50 against ≈ −9 for
// every other word, and every hypothesis runs to max_len_b = T words, where
// the search forces </s>. Values change, never shapes: the work per step is
// a trained model's. Returns false when the parameters are not there (a
// post-norm config has no final norm): then lengths are whatever they are.
inline bool force_length_t(model::Seq2Seq& model) {
  nn::ParamStore& params = model.params();
  const model::ModelConfig& c = model.config();
  const std::string table = c.share_all_embeddings   ? "embed.weight"
                            : c.share_decoder_output ? "tgt_embed.weight"
                                                     : "out_proj.weight";
  const nn::ParamId gain = params.find("dec.ln.weight"), bias = params.find("dec.ln.bias"), output = params.find(table);
  if (gain < 0 || bias < 0 || output < 0) return false;
  params.value(gain)[0] = 0.0f;
  params.value(bias)[0] = 1.0f;
  float* eos_row = params.value(output) + static_cast<std::int64_t>(text::kEos) * c.dim;
  std::fill(eos_row, eos_row + c.dim, 0.0f);
  eos_row[0] = -50.0f;
  return true;
}

struct DecodeResult {
  int sentences = 0;
  double ms_per_sentence = 0;
  std::int64_t shortest = 0, longest = 0;  // words of the best hypotheses
  bool forced = false;
};

inline DecodeResult measure_decoding(const model::ModelConfig& config, std::int64_t t, const Options& o) {
  model::Seq2Seq model(config);
  Rng init(1);
  model.initialize(init);
  DecodeResult r;
  r.forced = force_length_t(model);
  Arena arena;
  Rng rng(8);
  nn::StepContext ctx{model.params(), arena, rng, false};
  Rng data(9);
  auto sources = random_sentences(std::clamp<std::int64_t>(64 * 16 / t, 1, o.decode_max), t, data);
  decode::SearchOptions search;
  search.beam = kBeam;
  search.max_len_a = 0.0f;
  auto decode_seconds = [&](std::int64_t words) {
    search.max_len_b = static_cast<float>(words);
    const auto t0 = Clock::now();
    auto best = decode::beam_search(ctx, model, sources, search);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::make_pair(seconds, std::move(best));
  };
  decode_seconds(std::min<std::int64_t>(t, 4));  // warm-up: the search's buffers, the encoder's arena
  // A longer batch than the budget allows decodes fewer sentences: predicted
  // from the first T/8 steps, ×1.5 as the self-attention's steps grow with t.
  if (sources.size() > 1 && t >= 128) {
    const std::int64_t probe = t / 8;
    const double predicted = decode_seconds(probe).first * static_cast<double>(t) / static_cast<double>(probe) * 1.5;
    if (predicted > o.decode_budget_s) {
      const auto keep = static_cast<std::size_t>(
          std::max(1.0, std::floor(static_cast<double>(sources.size()) * o.decode_budget_s / predicted)));
      sources.resize(std::min(keep, sources.size()));
    }
  }
  std::vector<double> seconds;
  std::vector<std::vector<decode::Hypothesis>> best;
  for (int run = 0; run < o.decode_runs; ++run) {
    auto [run_seconds, run_best] = decode_seconds(t);
    seconds.push_back(run_seconds);
    best = std::move(run_best);
  }
  r.sentences = static_cast<int>(sources.size());
  r.ms_per_sentence = 1000.0 * bench::median(seconds) / static_cast<double>(r.sentences);
  r.shortest = std::numeric_limits<std::int64_t>::max();
  for (const auto& hyps : best) {
    const auto words = hyps.empty() ? 0 : static_cast<std::int64_t>(hyps.front().tokens.size());
    r.shortest = std::min(r.shortest, words);
    r.longest = std::max(r.longest, words);
  }
  return r;
}

// ---------------------------------------------------------------------------
// One cell of the table: an arch at a length

struct Cell {
  std::string arch;
  std::int64_t t = 0, batch = 0;
  std::string skipped;  // why the cell did not run ("" when it did)
  double estimate_bytes = 0;
  std::optional<TrainResult> train;
  std::optional<double> attention_bytes;
  std::string attention_error;  // why attention_bytes is missing
  std::optional<DecodeResult> decode;
  std::string decode_error;
  double flops = 0;        // per target token
  double other_cores = 0;  // CPU other processes used while the kept attempts ran (the larger of train, decode)
  int attempts = 0;        // training and decoding attempts made
};

// Runs one part of a cell; a failed allocation or any error becomes `error`.
template <class Part>
bool run_part(Part part, std::string& error) {
  try {
    part();
    return true;
  } catch (const std::bad_alloc&) {
    error = "does not fit (allocation failed)";
  } catch (const std::exception& e) {
    error = std::string("failed: ") + e.what();
  }
  return false;
}

// Measures part() again when other processes used more than kQuietCores of
// CPU meanwhile, at most `retries` more times and never after an attempt of
// over a minute (the long decodes); keeps the quietest attempt.
inline constexpr double kQuietCores = 0.15;

template <class Result, class Part>
Result quietest(Part part, int retries, double& other, int& attempts) {
  std::optional<Result> best;
  other = std::numeric_limits<double>::infinity();
  for (int attempt = 0; attempt <= retries; ++attempt) {
    const CpuSample before = sample_cpu();
    Result result = part();
    const CpuSample after = sample_cpu();
    ++attempts;
    const double used = other_cores(before, after);
    if (used < other) {
      best = std::move(result);
      other = used;
    }
    if (used < kQuietCores || std::chrono::duration<double>(after.at - before.at).count() > 60) break;
  }
  return std::move(*best);
}

inline Cell measure_cell(const std::string& arch, std::int64_t t, const Options& o, std::int64_t max_positions) {
  Cell cell;
  cell.arch = arch;
  cell.t = t;
  cell.batch = std::max<std::int64_t>(1, o.tokens / t);
  model::ModelConfig config = model::preset(arch);
  config.vocab_size = kVocab;
  config.dropout = 0.1f;
  config.max_positions = max_positions;
  cell.flops = flops_per_token(config, t);
  cell.estimate_bytes = estimate_step_bytes(config, cell.batch, t, num_threads());
  const double available = available_bytes();
  const double limit = std::min(o.max_gb * 1e9, available > 0 ? available : o.max_gb * 1e9);
  if (cell.estimate_bytes > limit) {
    char why[128];
    std::snprintf(why, sizeof why, "does not fit (step needs ~%.1f GB, limit %.1f GB)", cell.estimate_bytes / 1e9,
                  limit / 1e9);
    cell.skipped = why;
    return cell;
  }
  double train_other = 0, decode_other = 0;
  const bool trained = run_part(
      [&] {
        cell.train = quietest<TrainResult>([&] { return measure_training(config, cell.batch, t, o.steps); }, o.retries,
                                           train_other, cell.attempts);
      },
      cell.skipped);
  if (!trained) return cell;
  // A memory figure: no timing, no retry.
  run_part([&] { cell.attention_bytes = measure_attention_bytes(config, cell.batch, t); }, cell.attention_error);
  run_part(
      [&] {
        cell.decode = quietest<DecodeResult>([&] { return measure_decoding(config, t, o); }, o.retries, decode_other,
                                             cell.attempts);
      },
      cell.decode_error);
  cell.other_cores = std::max(train_other, cell.decode ? decode_other : 0.0);
  return cell;
}

}  // namespace attn::bench::length
