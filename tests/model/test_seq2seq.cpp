// Whole-model checks: gradients of the loss w.r.t. every parameter tensor,
// the fused loss against a naive one, incremental decoding against the
// teacher-forced forward, and the decoder's causality.
#include "../nn/grad_check.h"
#include "arch_variants.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/core/arena.h"
#include "attn/kernels/gemm.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/loss.h"
#include "attn/text/vocab.h"

using namespace attn;
using namespace attn::model;

namespace {

Batch tiny_batch() { return make_batch({{5, 6, 7, 8}, {9, 4}, {10, 11, 12}}, {{4, 5, 6}, {7, 8, 9, 10}, {11}}); }

void perturb_norms(nn::ParamStore& params) {
  Rng r(77);
  for (const auto& p : params.entries())
    if (p.init == nn::Init::zeros || p.init == nn::Init::ones)
      for (std::int64_t i = 0; i < p.shape.numel(); ++i) params.values()[p.offset + i] += 0.2f * (2 * r.uniform() - 1);
}

// A state arena whose memory holds NaN, so a step that reads a cache entry no
// step wrote (the caches are not zeroed) turns its log-probabilities NaN.
Arena poisoned_arena() {
  constexpr std::size_t floats = std::size_t{1} << 20;
  Arena arena(floats);
  std::fill_n(arena.alloc(floats), floats, std::numeric_limits<float>::quiet_NaN());
  arena.reset();
  return arena;
}

// decode_step at every position equals the teacher-forced log-probabilities.
void require_incremental_equals_forced(const ModelConfig& config, kernels::ComputeType type) {
  Seq2Seq model(config);
  Rng init(5);
  model.initialize(init);
  perturb_norms(model.params());
  model.params().set_compute_types(kernels::ComputeTypes::decoding(type), nn::ParamStore::Use::decoding);
  Arena arena, state_arena = poisoned_arena();
  Rng rng(1);
  nn::StepContext ctx{model.params(), arena, rng, false};
  const Batch batch = tiny_batch();
  const std::int64_t B = batch.size, tt = batch.tgt_len, V = model.config().vocab_size;
  std::vector<float> full(B * tt * V);
  model.teacher_forced_log_probs(ctx, batch, full.data());
  const float* memory = model.encode(ctx, batch.src.data(), B, batch.src_len, batch.src_lengths.data());
  DecoderState state =
      model.start_decoding(ctx, state_arena, memory, B, 1, batch.src_len, batch.src_lengths.data(), tt);
  std::vector<float> step(B * V);
  for (std::int64_t t = 0; t < tt; ++t) {
    std::vector<std::int32_t> tokens(B);
    for (std::int64_t b = 0; b < B; ++b) tokens[b] = batch.tgt_in[b * tt + t];
    model.decode_step(ctx, state, tokens.data(), step.data());
    for (std::int64_t b = 0; b < B; ++b) {
      if (t >= batch.tgt_lengths[b]) continue;  // past the end: no teacher-forced row to compare
      for (std::int64_t j = 0; j < V; ++j) {
        INFO("b " << b << " t " << t << " j " << j);
        REQUIRE(step[b * V + j] == Approx(full[(b * tt + t) * V + j]).margin(1e-5));
      }
    }
  }
}

// The loss's gradient w.r.t. every parameter tensor against central differences
// (dropout masks held fixed by restoring the Rng before each forward).
void require_gradients_match(const ModelConfig& config, int samples_per_tensor) {
  Seq2Seq model(config);
  Rng init(3);
  model.initialize(init);
  perturb_norms(model.params());
  Arena arena;
  Rng rng(11);
  nn::StepContext ctx{model.params(), arena, rng, config.dropout > 0 || config.attention_dropout > 0};
  const Batch batch = tiny_batch();
  const RngState rng_start = rng.state();
  auto loss = [&] {
    arena.reset();
    rng.set_state(rng_start);
    return model.forward_backward(ctx, batch, 0.1f, false, 1.0f).loss;
  };
  model.params().zero_grads();
  arena.reset();
  rng.set_state(rng_start);
  model.forward_backward(ctx, batch, 0.1f, true, 1.0f);
  test::check_all_parameters(model.params(), loss, {.samples_per_tensor = samples_per_tensor});
}

}  // namespace

TEST_CASE("seq2seq: gradient of the loss w.r.t. every parameter tensor matches finite differences",
          "[model][grad][big]") {
  struct Variant {
    const char* norm;
    bool share_all, share_out;
    float dropout;
  };
  for (const Variant v :
       {Variant{"pre", true, true, 0.0f}, Variant{"post", false, false, 0.0f}, Variant{"pre", false, true, 0.2f}}) {
    INFO("norm " << v.norm << " share_all " << v.share_all << " share_out " << v.share_out << " dropout " << v.dropout);
    ModelConfig config = tiny_config(v.norm, v.share_all, v.share_out);
    config.dropout = v.dropout;
    require_gradients_match(config, 4);
  }
}

TEST_CASE("loss: fused label-smoothed cross-entropy equals the naive formula", "[model]") {
  nn::ParamStore params;
  const std::int64_t V = 37, d = 5, rows = 300;  // more rows than one chunk
  const nn::ParamId w = params.add("w", {V, d}, nn::Init::normal, 1.0f);
  const nn::WeightMatrixId matrix = params.add_weight_matrix({w, V, d, d});
  params.allocate();
  Rng init(1);
  params.initialize(init);
  std::vector<float> h = test::random_vector(rows * d, 2, -2, 2);
  std::vector<std::int32_t> targets(rows);
  for (std::int64_t r = 0; r < rows; ++r)
    targets[r] = r % 7 == 0 ? text::kPad : static_cast<std::int32_t>(4 + r % (V - 4));
  const float eps = 0.1f;
  Arena scratch;
  const nn::LossSums got =
      nn::output_loss(params, matrix, h.data(), targets.data(), rows, d, V, eps, text::kPad, 1.0f, nullptr, scratch);
  double loss = 0, nll = 0;
  std::int64_t tokens = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (targets[r] == text::kPad) continue;
    std::vector<double> logit(V);
    double m = -1e300;
    for (std::int64_t j = 0; j < V; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < d; ++k) s += double(h[r * d + k]) * params.value(w)[j * d + k];
      logit[j] = s;
      m = std::max(m, s);
    }
    double z = 0;
    for (double l : logit) z += std::exp(l - m);
    const double lse = m + std::log(z);
    double row = 0;
    for (std::int64_t j = 0; j < V; ++j) {
      const double q = j == targets[r] ? 1 - eps : eps / (V - 1);
      row -= q * (logit[j] - lse);
    }
    loss += row;
    nll += lse - logit[targets[r]];
    ++tokens;
  }
  REQUIRE(got.tokens == tokens);
  REQUIRE(got.nll == Approx(nll).epsilon(1e-5));
  REQUIRE(got.loss == Approx(loss).epsilon(1e-5));
}

TEST_CASE("seq2seq: incremental decoding equals the teacher-forced forward", "[model][decode]") {
  for (const char* norm : {"pre", "post"}) {
    INFO("norm " << norm);
    require_incremental_equals_forced(tiny_config(norm, true, true), kernels::ComputeType::fp32);
  }
}

TEST_CASE("seq2seq, every arch: gradient w.r.t. every parameter tensor matches finite differences",
          "[model][grad][arch][big]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    require_gradients_match(arch_config(v), 3);
  }
}

TEST_CASE("seq2seq, every arch: incremental decoding equals the teacher-forced forward", "[model][decode][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    require_incremental_equals_forced(arch_config(v), kernels::ComputeType::fp32);
  }
}

// The decoder is causal as a whole: changing target input token t + 1 leaves
// every log-probability at positions ≤ t as it was, and changes position t + 1.
TEST_CASE("seq2seq, every arch: a target token never changes the log-probabilities before it", "[model][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(arch_config(v));
    Rng init(5);
    model.initialize(init);
    perturb_norms(model.params());
    Arena arena;
    Rng rng(1);
    nn::StepContext ctx{model.params(), arena, rng, false};
    const Batch batch = tiny_batch();
    const std::int64_t B = batch.size, tt = batch.tgt_len, V = model.config().vocab_size;
    std::vector<float> full(B * tt * V), changed(B * tt * V);
    model.teacher_forced_log_probs(ctx, batch, full.data());
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t + 1 < batch.tgt_lengths[b]; ++t) {
        INFO("sentence " << b << ", token " << t + 1 << " changed");
        Batch other = batch;
        std::int32_t& token = other.tgt_in[b * tt + t + 1];
        token = token == 5 ? 6 : 5;
        arena.reset();
        model.teacher_forced_log_probs(ctx, other, changed.data());
        for (std::int64_t i = 0; i <= t; ++i)
          for (std::int64_t j = 0; j < V; ++j)
            REQUIRE(changed[(b * tt + i) * V + j] == Approx(full[(b * tt + i) * V + j]).margin(1e-6));
        double change = 0;
        for (std::int64_t j = 0; j < V; ++j)
          change += std::abs(changed[(b * tt + t + 1) * V + j] - full[(b * tt + t + 1) * V + j]);
        REQUIRE(change > 1e-4);
      }
  }
}

// int8 products quantize each row of activations on its own and sum exactly,
// so a row's result does not depend on the rows beside it: one step at a time
// gives what the whole sentence does, as in FP32.
TEST_CASE("seq2seq, every arch, int8 products: incremental decoding equals the teacher-forced forward",
          "[model][decode][arch][int8]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    require_incremental_equals_forced(arch_config(v), kernels::ComputeType::int8);
  }
}

TEST_CASE("seq2seq, every arch: a sentence scores the same alone and in a padded batch", "[model][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "'");
    Seq2Seq model(arch_config(v));
    Rng init(9);
    model.initialize(init);
    Arena arena;
    Rng rng(1);
    nn::StepContext ctx{model.params(), arena, rng, false};
    const Batch alone = make_batch({{9, 4}}, {{7, 8}});
    const Batch padded = make_batch({{5, 6, 7, 8, 9, 10}, {9, 4}}, {{4, 5, 6, 7, 8, 9}, {7, 8}});
    const std::int64_t V = model.config().vocab_size;
    std::vector<float> a(alone.size * alone.tgt_len * V), p(padded.size * padded.tgt_len * V);
    model.teacher_forced_log_probs(ctx, alone, a.data());
    arena.reset();
    model.teacher_forced_log_probs(ctx, padded, p.data());
    for (std::int64_t t = 0; t < alone.tgt_lengths[0]; ++t)
      for (std::int64_t j = 0; j < V; ++j)
        REQUIRE(a[t * V + j] == Approx(p[(1 * padded.tgt_len + t) * V + j]).margin(1e-5));
  }
}

// select keeps, reorders and drops hypotheses: what it leaves decodes exactly
// as a fresh state of the kept sentences fed the chosen hypotheses' histories.
TEST_CASE("seq2seq, every arch: a state after select decodes as a fresh one with the kept histories",
          "[model][decode][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(arch_config(v));
    Rng init(11);
    model.initialize(init);
    perturb_norms(model.params());
    Arena arena, state_arena = poisoned_arena(), fresh_arena = poisoned_arena();
    Rng rng(1);
    nn::StepContext ctx{model.params(), arena, rng, false};
    const std::int64_t K = 2, steps = 3, V = model.config().vocab_size, t_max = steps + 2;
    // Three sentences × two beams; each row's history of `steps` tokens, then one more token.
    const std::vector<std::vector<std::int32_t>> sources = {{5, 6, 7, 8}, {9, 4}, {10, 11, 12}};
    std::vector<std::vector<std::int32_t>> history(6);
    Rng pick(3);
    for (auto& h : history) {
      h.push_back(text::kBos);
      for (std::int64_t t = 1; t <= steps; ++t) h.push_back(4 + static_cast<std::int32_t>(pick.uniform() * 9));
    }
    const Batch all = make_batch(sources, {});
    DecoderState state = model.start_decoding(ctx, state_arena,
                                              model.encode(ctx, all.src.data(), 3, all.src_len, all.src_lengths.data()),
                                              3, K, all.src_len, all.src_lengths.data(), t_max);
    std::vector<float> logprobs(6 * V);
    for (std::int64_t t = 0; t < steps; ++t) {
      std::vector<std::int32_t> tokens;
      for (const auto& h : history) tokens.push_back(h[t]);
      arena.reset();
      model.decode_step(ctx, state, tokens.data(), logprobs.data());
    }
    // Sentence 1 leaves; sentence 0's beams both continue its beam 1; sentence 2's swap.
    const std::vector<std::int32_t> order = {1, 1, 5, 4};
    model.select(state, order);
    REQUIRE(state.sentences == 2);
    std::vector<std::int32_t> last;
    for (std::int32_t from : order) last.push_back(history[from][steps]);
    arena.reset();
    model.decode_step(ctx, state, last.data(), logprobs.data());

    const Batch kept = make_batch({sources[0], sources[2]}, {});
    REQUIRE(kept.src_len == all.src_len);
    DecoderState fresh =
        model.start_decoding(ctx, fresh_arena,
                             model.encode(ctx, kept.src.data(), 2, kept.src_len, kept.src_lengths.data()), 2, K,
                             kept.src_len, kept.src_lengths.data(), t_max);
    std::vector<float> expected(4 * V);
    for (std::int64_t t = 0; t <= steps; ++t) {
      std::vector<std::int32_t> tokens;
      for (std::int32_t from : order) tokens.push_back(history[from][t]);
      arena.reset();
      model.decode_step(ctx, fresh, tokens.data(), expected.data());
    }
    for (std::int64_t i = 0; i < 4 * V; ++i) REQUIRE(logprobs[i] == Approx(expected[i]).margin(1e-5));
  }
}

TEST_CASE("seq2seq: select rejects an order that splits or reorders sentences", "[model][decode]") {
  Seq2Seq model(tiny_config("pre", true, true));
  Arena arena, state_arena;
  Rng rng(1);
  nn::StepContext ctx{model.params(), arena, rng, false};
  const Batch batch = tiny_batch();
  const float* memory = model.encode(ctx, batch.src.data(), 3, batch.src_len, batch.src_lengths.data());
  DecoderState state = model.start_decoding(ctx, state_arena, memory, 3, 2, batch.src_len, batch.src_lengths.data(), 4);
  for (const std::vector<std::int32_t>& bad :
       std::vector<std::vector<std::int32_t>>{{0, 2}, {2, 3, 0, 1}, {0, 1, 2}, {-1, 0}, {4, 5, 6, 7}, {0, 1, 0, 1}}) {
    INFO("order of size " << bad.size() << " starting " << bad[0]);
    REQUIRE_THROWS_AS(model.select(state, bad), std::logic_error);
  }
  model.select(state, std::vector<std::int32_t>{1, 0, 4, 5});
  REQUIRE(state.sentences == 2);
  REQUIRE(state.src_lengths == std::vector<std::int32_t>{batch.src_lengths[0], batch.src_lengths[2]});
}

TEST_CASE("seq2seq: with attention dropout (self and cross), gradients match finite differences", "[model][grad]") {
  ModelConfig config = tiny_config("pre", true, true);
  config.attention_dropout = 0.3f;
  require_gradients_match(config, 4);
}

TEST_CASE("seq2seq, every arch: attention dropout acts in training only, and at 0 changes nothing",
          "[model][arch][dropout]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO(v.arch << " " << v.decoder_mixer << " " << v.norm);
    auto loss = [&](float p, bool training) {
      ModelConfig config = arch_config(v);
      config.options["muse_tap_dropout"] = 0.0f;  // the only other dropouts left on
      config.options["lightconv_weight_dropout"] = 0.0f;
      config.attention_dropout = p;
      Seq2Seq model(config);
      Rng init(3);
      model.initialize(init);
      Arena arena;
      Rng rng(11);
      nn::StepContext ctx{model.params(), arena, rng, training};
      return model.forward_backward(ctx, tiny_batch(), 0.1f, false, 1.0f).loss;
    };
    const double eval = loss(0.0f, false);
    REQUIRE(loss(0.0f, true) == eval);
    REQUIRE(loss(0.3f, false) == eval);
    REQUIRE(loss(0.3f, true) != eval);
  }
}
