// Attention dropout (`--attention-dropout`, nn/attention.h WeightDropout) in
// every mixer and in cross-attention: gradients with the mask held fixed,
// exactly the undropped path at p = 0 and in evaluation, the dropped share,
// unbiased outputs, and the same bits for any thread count.
#include "grad_check.h"

#include <cmath>
#include <memory>

#include "attn/core/threads.h"
#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/csan/csan_mixer.h"
#include "attn/nn/mechanisms/disa/disa.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "attn/nn/mechanisms/mha/mha_mixer.h"
#include "attn/nn/mechanisms/muse/muse_mixer.h"
#include "attn/nn/transformer_layer.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::weighted_sum;

namespace {

using Fixture = attn::test::LayerFixture;

struct Case {
  const char* what;
  MixerSpec spec;
};

MixerSpec spec_of(const char* mechanism, bool causal, nlohmann::json options = nlohmann::json::object()) {
  return test::mixer_spec(mechanism, 8, 2, causal, std::move(options));
}

// Every mixer, in the variants whose dropout code differs.
std::vector<Case> cases() {
  return {
      {"mha", spec_of("mha", false)},
      {"mha causal", spec_of("mha", true)},
      {"csan 1D", spec_of("csan", false, {{"csan_window", 3}, {"csan_head_window", 1}})},
      {"csan 2D", spec_of("csan", false, {{"csan_window", 3}, {"csan_head_window", 3}})},
      {"csan 2D wrap",
       spec_of("csan", false, {{"csan_window", 3}, {"csan_head_window", 3}, {"csan_head_boundary", "wrap"}})},
      {"csan causal 2D", spec_of("csan", true, {{"csan_window", 3}, {"csan_head_window", 3}})},
      {"muse", spec_of("muse", false, {{"muse_kernels", {3, 5}}, {"muse_tap_dropout", 0.0}})},
      {"muse causal", spec_of("muse", true, {{"muse_kernels", {3}}, {"muse_tap_dropout", 0.0}})},
      {"muse separate",
       spec_of("muse", false,
               {{"muse_kernels", {3, 5}}, {"muse_tap_dropout", 0.0}, {"muse_separate_projection", true}})},
      {"muse without cells", spec_of("muse", false, {{"muse_kernels", nlohmann::json::array()}})},
      {"fastdisa", spec_of("fastdisa", false, {{"disa_gate", true}, {"disa_t2t", "exp"}})},
      {"fastdisa causal sigmoid", spec_of("fastdisa", true, {{"disa_gate", true}, {"disa_t2t", "sigmoid"}})},
      {"fastdisa no gate", spec_of("fastdisa", false, {{"disa_gate", false}, {"disa_t2t", "exp"}})},
      {"disa", spec_of("disa", false)},
      {"disa causal", spec_of("disa", true)},
  };
}

// make_mixer, but a MUSE mixer without cells (which the options do not allow) directly.
std::unique_ptr<TokenMixer> make(ParamStore& params, const MixerSpec& spec) {
  if (spec.mechanism == "muse" && spec.options.at("muse_kernels").empty())
    return std::make_unique<MuseMixer>(params, "mix", spec);
  return make_mixer(params, "mix", spec);
}

MixerSpec with_dropout(MixerSpec spec, float p) {
  spec.attention_dropout = p;
  return spec;
}

// The masks a mixer's forward drew, as (keep bytes, count) of its drawn rows.
struct Drawn {
  std::vector<const WeightDropout*> masks;
};

Drawn masks_of(const TokenMixer::Saved& saved) {
  if (auto* s = dynamic_cast<const MhaMixer::Saved*>(&saved)) return {{&s->attn.drop}};
  if (auto* s = dynamic_cast<const CsanMixer::Saved*>(&saved)) return {{&s->drop}};
  if (auto* s = dynamic_cast<const MuseMixer::Saved*>(&saved)) return {{&s->attn.drop}};
  if (auto* s = dynamic_cast<const FastDisaMixer::Saved*>(&saved)) return {{&s->drop_a, &s->drop_e}};
  if (auto* s = dynamic_cast<const DisaMixer::Saved*>(&saved)) return {{&s->drop}};
  FAIL("unknown mixer");
  return {};
}

// One forward (and backward) of a mixer with the Rng at `rng_state`.
struct Pass {
  std::vector<float> y, dx, grads;
  RngState after;  // the Rng after the forward
};

Pass run(Fixture& f, const TokenMixer& mixer, const std::vector<float>& x, const std::vector<float>& w, std::int64_t B,
         std::int64_t T, const std::vector<std::int32_t>& lengths, bool training, const RngState& rng_state) {
  Pass pass;
  pass.y.resize(x.size());
  pass.dx.assign(x.size(), 0.0f);
  f.arena.reset();
  f.ctx.training = training;
  f.rng.set_state(rng_state);
  f.params.zero_grads();
  auto saved = mixer.forward(f.ctx, x.data(), pass.y.data(), B, T, lengths.data());
  pass.after = f.rng.state();
  mixer.backward(f.ctx, *saved, w.data(), pass.dx.data());
  pass.grads.assign(f.params.grads().begin(), f.params.grads().end());
  return pass;
}

std::vector<float> zero_padded(std::vector<float> w, std::int64_t T, std::int64_t d,
                               const std::vector<std::int32_t>& lengths) {
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::int64_t t = lengths[b]; t < T; ++t)
      std::fill(w.begin() + (static_cast<std::int64_t>(b) * T + t) * d,
                w.begin() + (static_cast<std::int64_t>(b) * T + t + 1) * d, 0.0f);
  return w;
}

}  // namespace

TEST_CASE("attention dropout: every mixer's gradients match finite differences with the mask held fixed",
          "[nn][grad][dropout]") {
  const std::int64_t B = 2, T = 6, d = 8;
  const std::vector<std::int32_t> lengths{6, 4};
  for (const Case& c : cases()) {
    INFO(c.what);
    Fixture f;
    const auto mixer = make(f.params, with_dropout(c.spec, 0.3f));
    f.ready(3);
    std::vector<float> x = test::random_vector(B * T * d, 31);
    const std::vector<float> w = zero_padded(test::random_vector(B * T * d, 32), T, d, lengths);
    const RngState rng_state = f.rng.state();  // the same masks in every forward
    std::vector<float> y(B * T * d);
    std::unique_ptr<TokenMixer::Saved> saved;
    auto loss = [&] {
      f.arena.reset();
      f.rng.set_state(rng_state);
      saved = mixer->forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      return weighted_sum(y.data(), w);
    };
    f.ctx.training = false;
    loss();
    const std::vector<float> eval = y;
    f.ctx.training = true;
    f.params.zero_grads();
    loss();
    REQUIRE(y != eval);  // the masks really drop weights
    std::vector<float> dx(x.size(), 0.0f);
    mixer->backward(f.ctx, *saved, w.data(), dx.data());
    check_all_parameters(f.params, loss);
    check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 16}, 33);
  }
}

TEST_CASE("attention dropout: cross-attention's gradients match finite differences with the mask held fixed",
          "[nn][grad][dropout]") {
  Fixture f;
  MultiHeadAttention mha;
  mha.declare_cross(f.params, "att", 8, 2);
  mha.attention_dropout = 0.3f;
  f.ready();
  const std::int64_t B = 2, tq = 5, tk = 4, d = 8;
  const std::vector<std::int32_t> q_len{5, 3}, k_len{4, 2};
  std::vector<float> x = test::random_vector(B * tq * d, 11), mem = test::random_vector(B * tk * d, 12);
  const std::vector<float> w = zero_padded(test::random_vector(B * tq * d, 13), tq, d, q_len);
  const RngState rng_state = f.rng.state();
  std::vector<float> y(B * tq * d);
  MultiHeadAttention::Saved saved;
  auto loss = [&] {
    f.arena.reset();
    f.rng.set_state(rng_state);
    saved = mha.forward_cross(f.ctx, x.data(), mem.data(), y.data(), B, tq, tk, q_len.data(), k_len.data());
    return weighted_sum(y.data(), w);
  };
  loss();
  const std::vector<float> eval = y;
  REQUIRE_FALSE(saved.drop.active());
  f.ctx.training = true;
  f.params.zero_grads();
  loss();
  REQUIRE(saved.drop.active());
  REQUIRE(y != eval);
  std::vector<float> dx(x.size(), 0.0f), dmem(mem.size(), 0.0f);
  mha.backward(f.ctx, saved, w.data(), dx.data(), dmem.data());
  check_all_parameters(f.params, loss);
  check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 12}, 21);
  check_gradient("memory", mem.data(), dmem.data(), static_cast<std::int64_t>(mem.size()), loss,
                 {.samples_per_tensor = 12}, 22);
}

TEST_CASE("attention dropout: p = 0 in training and any p in evaluation are exactly the undropped mixer",
          "[nn][dropout]") {
  const std::int64_t B = 2, T = 7, d = 8;
  const std::vector<std::int32_t> lengths{7, 5};
  for (const Case& c : cases()) {
    INFO(c.what);
    const std::vector<float> x = test::random_vector(B * T * d, 41);
    const std::vector<float> w = zero_padded(test::random_vector(B * T * d, 42), T, d, lengths);
    auto pass = [&](float p, bool training) {
      Fixture f;
      const auto mixer = make(f.params, with_dropout(c.spec, p));
      f.ready(4);
      const RngState start = f.rng.state();
      Pass r = run(f, *mixer, x, w, B, T, lengths, training, start);
      if (p == 0.0f || !training) REQUIRE(r.after == start);  // no mask drawn, the Rng untouched
      return r;
    };
    const Pass plain = pass(0.0f, false);
    for (const auto& [p, training] : {std::pair{0.0f, true}, std::pair{0.3f, false}}) {
      const Pass same = pass(p, training);
      REQUIRE(same.y == plain.y);
      REQUIRE(same.dx == plain.dx);
      REQUIRE(same.grads == plain.grads);
    }
    const Pass dropped = pass(0.3f, true);
    REQUIRE(dropped.y != plain.y);
    REQUIRE(dropped.dx != plain.dx);
  }
}

TEST_CASE("attention dropout: the share of dropped weights is p (Fast-DiSA: 1 − √(1 − p) per factor)",
          "[nn][dropout]") {
  const std::int64_t B = 2, T = 48, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{48, 48};  // every row drawn
  const float p = 0.3f;
  for (const Case& c : cases()) {
    INFO(c.what);
    Fixture f;
    const auto mixer = make(f.params, with_dropout(c.spec, p));
    f.ready(5);
    f.ctx.training = true;
    const std::vector<float> x = test::random_vector(B * T * d, 51);
    std::vector<float> y(B * T * d);
    const auto saved = mixer->forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    const Drawn drawn = masks_of(*saved);
    const bool factored = drawn.masks.size() == 2;
    const double want = factored ? 1.0 - std::sqrt(1.0 - p) : p;
    for (const WeightDropout* mask : drawn.masks) {
      REQUIRE(mask->active());
      const std::int64_t n = B * H * T * mask->width;  // rows: (sequence, head, position)
      std::int64_t dropped = 0;
      for (std::int64_t i = 0; i < n; ++i) dropped += mask->keep[i] == 0 ? 1 : 0;
      const double share = static_cast<double>(dropped) / static_cast<double>(n);
      INFO("width " << mask->width << " dropped " << dropped << " of " << n);
      // ≥ 1536 draws: 5 standard deviations are below 0.06.
      REQUIRE(std::abs(share - want) <= 5.0 * std::sqrt(want * (1.0 - want) / static_cast<double>(n)));
    }
    if (factored) {  // a term A_ij E_jk survives when both factors do: 1 − p
      const WeightDropout &a = *drawn.masks[0], &e = *drawn.masks[1];
      std::int64_t kept = 0, total = 0;
      for (std::int64_t row = 0; row < B * H; ++row)
        for (std::int64_t i = 0; i < T; i += 5)
          for (std::int64_t j = 0; j < T; ++j)
            for (std::int64_t k = 0; k < e.width; ++k, ++total)
              kept += a.keep[(row * T + i) * T + j] && e.keep[(row * T + j) * e.width + k] ? 1 : 0;
      const double share = 1.0 - static_cast<double>(kept) / static_cast<double>(total);
      REQUIRE(std::abs(share - p) <= 0.03);
    }
  }
}

TEST_CASE("attention dropout: averaged over masks, the training output is the evaluation output", "[nn][dropout]") {
  // W̃ = W ⊙ keep / (1 − p) has expectation W (Fast-DiSA: E[r_A r_E] / (1 − p) = 1), so the mean of
  // many training outputs approaches the evaluation output — far closer than one draw is.
  const std::int64_t B = 1, T = 6, d = 8;
  const std::vector<std::int32_t> lengths{6};
  const int draws = 400;
  for (const Case& c : cases()) {
    INFO(c.what);
    Fixture f;
    const auto mixer = make(f.params, with_dropout(c.spec, 0.3f));
    f.ready(6);
    const std::vector<float> x = test::random_vector(B * T * d, 61);
    std::vector<float> eval(B * T * d), y(B * T * d);
    mixer->forward(f.ctx, x.data(), eval.data(), B, T, lengths.data());
    f.ctx.training = true;
    std::vector<double> mean(eval.size(), 0.0);
    double one_draw = 0.0;  // mean |y − eval| of single draws
    for (int k = 0; k < draws; ++k) {
      f.arena.reset();
      mixer->forward(f.ctx, x.data(), y.data(), B, T, lengths.data());  // the Rng moves on: a new mask each time
      for (std::size_t n = 0; n < y.size(); ++n) {
        mean[n] += y[n] / static_cast<double>(draws);
        one_draw += std::abs(y[n] - eval[n]) / static_cast<double>(draws * y.size());
      }
    }
    double averaged = 0.0;
    for (std::size_t n = 0; n < y.size(); ++n) averaged += std::abs(mean[n] - eval[n]) / static_cast<double>(y.size());
    INFO("one draw " << one_draw << ", averaged " << averaged);
    REQUIRE(one_draw > 1e-3);
    REQUIRE(averaged < 0.15 * one_draw);  // ~1/√400 = 0.05 without bias
  }
}

TEST_CASE("attention dropout: forward and backward are bitwise the same for 1 and 2 threads", "[nn][dropout]") {
  const std::int64_t B = 3, T = 9, d = 8;
  const std::vector<std::int32_t> lengths{9, 6, 2};
  const int saved_threads = num_threads();
  for (const Case& c : cases()) {
    INFO(c.what);
    Fixture f;
    const auto mixer = make(f.params, with_dropout(c.spec, 0.3f));
    f.ready(7);
    const std::vector<float> x = test::random_vector(B * T * d, 71);
    const std::vector<float> w = zero_padded(test::random_vector(B * T * d, 72), T, d, lengths);
    const RngState start = f.rng.state();
    set_threads(1);
    const Pass one = run(f, *mixer, x, w, B, T, lengths, true, start);
    set_threads(2);
    const Pass two = run(f, *mixer, x, w, B, T, lengths, true, start);
    REQUIRE(one.y == two.y);
    REQUIRE(one.dx == two.dx);
    REQUIRE(one.grads == two.grads);
    REQUIRE(one.after == two.after);
  }
  set_threads(saved_threads);
}

TEST_CASE("attention dropout: a decoder layer's self- and cross-attention take it from the layer's spec",
          "[nn][dropout]") {
  Fixture f;
  DecoderLayer layer;
  const LayerShape shape{8, 2, 12, 0.0f, 0.0f, true, false};
  layer.declare(f.params, "dec.0", shape, with_dropout(spec_of("mha", true), 0.25f));
  REQUIRE(layer.cross_attn.attention_dropout == 0.25f);
  REQUIRE(dynamic_cast<const MhaMixer&>(*layer.self_attn).attention().attention_dropout == 0.25f);
  DecoderLayer plain;
  plain.declare(f.params, "dec.1", shape, spec_of("mha", true));
  REQUIRE(plain.cross_attn.attention_dropout == 0.0f);
}
