// Layer-level gradient checks (central differences) and masking properties.
#include "grad_check.h"

#include <cstring>

#include "attn/core/arena.h"
#include "attn/nn/attention.h"
#include "attn/nn/feed_forward.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/linear.h"
#include "attn/nn/transformer_layer.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::weighted_sum;

namespace {

using Fixture = attn::test::LayerFixture;

}  // namespace

TEST_CASE("linear: gradients of weight, bias and input match finite differences", "[nn][grad]") {
  Fixture f;
  Linear lin;
  lin.declare(f.params, "lin", 7, 5);
  f.ready();
  const std::int64_t rows = 3;
  std::vector<float> x = test::random_vector(rows * 7, 2), w = test::random_vector(rows * 5, 3);
  std::vector<float> y(rows * 5), dx(rows * 7, 0.0f);
  auto loss = [&] {
    lin.forward(f.params, x.data(), y.data(), rows);
    return weighted_sum(y.data(), w);
  };
  f.params.zero_grads();
  loss();
  lin.backward(f.params, x.data(), w.data(), dx.data(), rows);
  check_all_parameters(f.params, loss);
  check_gradient("x", x.data(), dx.data(), rows * 7, loss, {}, 9);
}

TEST_CASE("attention: self, causal and cross gradients match finite differences", "[nn][grad]") {
  for (bool causal : {false, true}) {
    for (bool cross : {false, true}) {
      if (causal && cross) continue;
      INFO("causal " << causal << " cross " << cross);
      Fixture f;
      MultiHeadAttention mha;
      if (cross)
        mha.declare_cross(f.params, "att", 8, 2);
      else
        mha.declare(f.params, "att", 8, 2);
      f.ready();
      const std::int64_t B = 2, tq = 5, tk = cross ? 4 : 5, d = 8;
      std::vector<std::int32_t> q_len{5, 3}, k_len = cross ? std::vector<std::int32_t>{4, 2} : q_len;
      std::vector<float> x = test::random_vector(B * tq * d, 11), mem = test::random_vector(B * tk * d, 12);
      std::vector<float> w = test::random_vector(B * tq * d, 13);
      // Padded query rows do not count in the loss (their outputs are defined as 0).
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t t = q_len[b]; t < tq; ++t)
          for (std::int64_t j = 0; j < d; ++j) w[(b * tq + t) * d + j] = 0.0f;
      std::vector<float> y(B * tq * d);
      MultiHeadAttention::Saved saved;
      auto loss = [&] {
        f.arena.reset();
        saved = cross ? mha.forward_cross(f.ctx, x.data(), mem.data(), y.data(), B, tq, tk, q_len.data(), k_len.data())
                      : mha.forward_self(f.ctx, x.data(), y.data(), B, tq, q_len.data(), causal);
        return weighted_sum(y.data(), w);
      };
      f.params.zero_grads();
      loss();
      std::vector<float> dx(x.size(), 0.0f), dmem(mem.size(), 0.0f);
      mha.backward(f.ctx, saved, w.data(), dx.data(), cross ? dmem.data() : nullptr);
      check_all_parameters(f.params, loss);
      check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 12},
                     21);
      if (cross)
        check_gradient("memory", mem.data(), dmem.data(), static_cast<std::int64_t>(mem.size()), loss,
                       {.samples_per_tensor = 12}, 22);
    }
  }
}

TEST_CASE("attention: padded keys are never attended, causal rows never see the future", "[nn]") {
  Fixture f;
  MultiHeadAttention mha;
  mha.declare(f.params, "att", 8, 2);
  f.ready();
  const std::int64_t B = 1, T = 6, d = 8;
  std::vector<std::int32_t> len{4};
  std::vector<float> x = test::random_vector(B * T * d, 31), y1(B * T * d), y2(B * T * d);
  mha.forward_self(f.ctx, x.data(), y1.data(), B, T, len.data(), false);
  for (std::int64_t j = 4 * d; j < T * d; ++j) x[j] = 100.0f;  // change only padded positions
  mha.forward_self(f.ctx, x.data(), y2.data(), B, T, len.data(), false);
  for (std::int64_t i = 0; i < 4 * d; ++i) REQUIRE(y1[i] == y2[i]);
  // Causal: changing position 3 leaves outputs 0..2 untouched.
  std::vector<std::int32_t> full{6};
  mha.forward_self(f.ctx, x.data(), y1.data(), B, T, full.data(), true);
  for (std::int64_t j = 3 * d; j < 4 * d; ++j) x[j] += 1.0f;
  mha.forward_self(f.ctx, x.data(), y2.data(), B, T, full.data(), true);
  for (std::int64_t i = 0; i < 3 * d; ++i) REQUIRE(y1[i] == y2[i]);
  bool changed = false;
  for (std::int64_t i = 3 * d; i < 4 * d; ++i) changed |= y1[i] != y2[i];
  REQUIRE(changed);
}

TEST_CASE("feed-forward and layer norm: gradients match finite differences", "[nn][grad]") {
  Fixture f;
  FeedForward ffn;
  ffn.declare(f.params, "ffn", 6, 10);
  LayerNorm ln;
  ln.declare(f.params, "ln", 6);
  f.ready();
  const std::int64_t rows = 4;
  std::vector<float> x = test::random_vector(rows * 6, 41), w = test::random_vector(rows * 6, 42);
  std::vector<float> h(rows * 6), y(rows * 6);
  FeedForward::Saved fs;
  LayerNorm::Saved ls;
  auto loss = [&] {
    f.arena.reset();
    ls = ln.forward(f.ctx, x.data(), h.data(), rows);
    fs = ffn.forward(f.ctx, h.data(), y.data(), rows);
    return weighted_sum(y.data(), w);
  };
  f.params.zero_grads();
  loss();
  std::vector<float> dh(rows * 6, 0.0f), dx(rows * 6, 0.0f);
  ffn.backward(f.ctx, fs, w.data(), dh.data());
  ln.backward(f.ctx, ls, dh.data(), dx.data());
  check_all_parameters(f.params, loss);
  check_gradient("x", x.data(), dx.data(), rows * 6, loss, {}, 43);
}

TEST_CASE("encoder and decoder layers, pre- and post-norm, sequential and parallel: gradients match finite differences",
          "[nn][grad]") {
  for (int variant = 0; variant < 4; ++variant) {
    const bool pre = variant % 2 == 0, parallel = variant >= 2;
    INFO("pre_norm " << pre << ", parallel " << parallel);
    Fixture f;
    const LayerShape shape{8, 2, 12, 0.0f, 0.0f, pre, parallel};
    const MixerSpec mixer = test::mixer_spec("mha", 8, 2, false);
    EncoderLayer enc;
    enc.declare(f.params, "enc", shape, mixer);
    DecoderLayer dec;
    dec.declare(f.params, "dec", shape, mixer);
    f.ready();
    const std::int64_t B = 2, ts = 4, tt = 3, d = 8;
    std::vector<std::int32_t> src_len{4, 2}, tgt_len{3, 2};
    std::vector<float> x = test::random_vector(B * ts * d, 51), yin = test::random_vector(B * tt * d, 52);
    std::vector<float> w = test::random_vector(B * tt * d, 53);
    for (std::int64_t j = (1 * tt + 2) * d; j < (1 * tt + 3) * d; ++j) w[j] = 0.0f;  // padded target row
    EncoderLayer::Saved es;
    DecoderLayer::Saved ds;
    const float* out = nullptr;
    const float* mem = nullptr;
    auto loss = [&] {
      f.arena.reset();
      mem = enc.forward(f.ctx, x.data(), B, ts, src_len.data(), es);
      out = dec.forward(f.ctx, yin.data(), mem, B, tt, ts, tgt_len.data(), src_len.data(), ds);
      return weighted_sum(out, w);
    };
    f.params.zero_grads();
    loss();
    std::vector<float> dyin(yin.size(), 0.0f), dx(x.size(), 0.0f);
    float* dmem = f.arena.alloc_zeroed(B * ts * d);
    dec.backward(f.ctx, ds, w.data(), dyin.data(), dmem);
    enc.backward(f.ctx, es, dmem, dx.data());
    check_all_parameters(f.params, loss);
    check_gradient("decoder input", yin.data(), dyin.data(), static_cast<std::int64_t>(yin.size()), loss,
                   {.samples_per_tensor = 10}, 54);
    // Padded source positions get no gradient worth checking; sample the valid ones.
    check_gradient("encoder input", x.data(), dx.data(), ts * d, loss, {.samples_per_tensor = 10}, 55);
  }
}
