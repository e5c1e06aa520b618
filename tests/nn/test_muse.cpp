// MUSE: the dynamic depth-wise conv cells with their gate, and the MuseMixer
// built on them, against naive double-precision references, central finite
// differences, causality, incremental decoding and padding invariance.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "attn/core/arena.h"
#include "attn/core/threads.h"
#include "attn/nn/mechanisms/muse/dynamic_conv.h"
#include "attn/nn/mechanisms/muse/muse_mixer.h"
#include "grad_check.h"
#include "mixer_checks.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::weighted_sum;

namespace {

// Gate logits and biases moved by up to ±0.6: a visibly non-uniform gate.
struct Fixture : attn::test::LayerFixture {
  void ready(std::uint64_t seed = 1) { LayerFixture::ready(seed, 0.6f); }
};

using Matrix = std::vector<double>;

// Naive MultiScaleConv in double: v rows of stride ldv; returns Cmix [B·T, d]
// and, per kernel, the normalised taps [B·T, H, k] (0 on pad rows).
Matrix reference_conv(const Fixture& f, const std::string& name, const std::vector<std::int64_t>& kernels, bool causal,
                      const float* v, std::int64_t ldv, std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t H,
                      const std::vector<std::int32_t>& lengths, std::vector<Matrix>* taps_out = nullptr) {
  const std::int64_t dh = d / H, n = static_cast<std::int64_t>(kernels.size());
  Matrix out(B * T * d, 0.0);
  if (n == 0) return out;
  const float* alpha = f.value(name + ".gate");
  std::vector<double> pi(n);
  double total = 0.0;
  for (std::int64_t i = 0; i < n; ++i) total += pi[i] = std::exp(static_cast<double>(alpha[i]));
  for (double& p : pi) p /= total;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = kernels[i], P = causal ? k - 1 : k / 2;
    const float* wf = f.value(name + ".conv." + std::to_string(i) + ".weight");  // [H·k, d]
    Matrix taps(B * T * H * k, 0.0);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < lengths[b]; ++t)
        for (std::int64_t h = 0; h < H; ++h) {
          std::vector<double> z(k);
          double top = -1e300;
          for (std::int64_t kk = 0; kk < k; ++kk) {
            double s = 0.0;
            for (std::int64_t c = 0; c < d; ++c) s += double(v[(b * T + t) * ldv + c]) * wf[(h * k + kk) * d + c];
            z[kk] = s;
            top = std::max(top, s);
          }
          double sum = 0.0;
          for (double& e : z) sum += e = std::exp(e - top);
          for (std::int64_t kk = 0; kk < k; ++kk) {
            const double w = z[kk] / sum;
            taps[((b * T + t) * H + h) * k + kk] = w;
            const std::int64_t s = t + kk - P;
            if (s < 0 || s >= lengths[b]) continue;  // pad and out-of-range positions are zero
            for (std::int64_t c = h * dh; c < (h + 1) * dh; ++c)
              out[(b * T + t) * d + c] += pi[i] * w * v[(b * T + s) * ldv + c];
          }
        }
    if (taps_out) taps_out->push_back(std::move(taps));
  }
  return out;
}

// Naive MuseMixer forward in double: y [B·T, d].
// With `separate` (MUSE-separate) the cells read x · Wcᵀ instead of V.
Matrix reference_mixer(const Fixture& f, const std::string& name, const std::vector<std::int64_t>& kernels, bool causal,
                       const std::vector<float>& x, std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t H,
                       const std::vector<std::int32_t>& lengths, bool separate = false) {
  const std::int64_t rows = B * T, dh = d / H;
  std::vector<float> qkv(rows * 3 * d);  // rounded to float: the conv reference reads float V like the mixer
  Matrix qkvd(rows * 3 * d);
  const char* parts[] = {"q", "k", "v"};
  for (int p = 0; p < 3; ++p) {
    const float* w = f.value(name + "." + parts[p] + ".weight");
    const float* bias = f.value(name + "." + parts[p] + ".bias");
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < d; ++j) {
        double s = bias[j];
        for (std::int64_t c = 0; c < d; ++c) s += double(x[r * d + c]) * w[j * d + c];
        qkvd[r * 3 * d + p * d + j] = s;
        qkv[r * 3 * d + p * d + j] = static_cast<float>(s);
      }
  }
  const std::int64_t width = kernels.empty() ? d : 2 * d;
  Matrix cat(rows * width, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < lengths[b]; ++i) {
        const std::int64_t keys = causal ? std::min<std::int64_t>(lengths[b], i + 1) : lengths[b];
        std::vector<double> e(keys);
        double top = -1e300, sum = 0.0;
        for (std::int64_t j = 0; j < keys; ++j) {
          double s = 0.0;
          for (std::int64_t c = h * dh; c < (h + 1) * dh; ++c)
            s += qkvd[(b * T + i) * 3 * d + c] * qkvd[(b * T + j) * 3 * d + d + c];
          e[j] = s / std::sqrt(double(dh));
          top = std::max(top, e[j]);
        }
        for (double& a : e) sum += a = std::exp(a - top);
        for (std::int64_t j = 0; j < keys; ++j)
          for (std::int64_t c = h * dh; c < (h + 1) * dh; ++c)
            cat[(b * T + i) * width + c] += e[j] / sum * qkvd[(b * T + j) * 3 * d + 2 * d + c];
      }
  std::vector<float> conv_in(rows * d);  // [B·T, d], rounded to float like the mixer's
  if (separate) {
    const float* wc = f.value(name + ".conv_in.weight");
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < d; ++j) {
        double s = 0.0;
        for (std::int64_t c = 0; c < d; ++c) s += double(x[r * d + c]) * wc[j * d + c];
        conv_in[r * d + j] = static_cast<float>(s);
      }
  }
  const Matrix conv = separate
                          ? reference_conv(f, name, kernels, causal, conv_in.data(), d, B, T, d, H, lengths)
                          : reference_conv(f, name, kernels, causal, qkv.data() + 2 * d, 3 * d, B, T, d, H, lengths);
  if (!kernels.empty())
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < d; ++c) cat[r * width + d + c] = conv[r * d + c];
  const float* wo = f.value(name + ".o.weight");
  const float* bo = f.value(name + ".o.bias");
  Matrix y(rows * d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      double s = bo[j];
      for (std::int64_t c = 0; c < width; ++c) s += cat[r * width + c] * wo[j * width + c];
      y[r * d + j] = s;
    }
  return y;
}

MixerSpec muse_spec(std::int64_t d, std::int64_t heads, std::vector<std::int64_t> kernels, bool causal,
                    float tap_dropout = 0.0f, bool separate = false) {
  return test::mixer_spec("muse", d, heads, causal,
                          {{"muse_kernels", std::move(kernels)},
                           {"muse_tap_dropout", tap_dropout},
                           {"muse_separate_projection", separate}});
}

// Zero weights on padded rows: their outputs are not part of any loss.
void zero_pad_rows(std::vector<float>& w, std::int64_t T, std::int64_t d, const std::vector<std::int32_t>& lengths) {
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::int64_t t = lengths[b]; t < T; ++t)
      std::fill(w.begin() + (b * T + t) * d, w.begin() + (b * T + t + 1) * d, 0.0f);
}

}  // namespace

TEST_CASE("muse conv: cells and gate match a naive double reference (centred, causal, even k, k > T)", "[muse]") {
  const std::int64_t B = 3, T = 6, d = 8, H = 2, ldv = 3 * d;
  const std::vector<std::int32_t> lengths{6, 4, 1};
  const std::vector<std::int64_t> kernels{3, 4, 15};
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    MultiScaleConv conv;
    conv.declare(f.params, "m", d, H, kernels, causal, 0.1f);
    f.ready(7);
    // V read in place at column 2d of a [B·T, 3d] buffer; the pad rows hold large values that must not leak.
    std::vector<float> qkv = test::random_vector(B * T * ldv, 8, -2.0f, 2.0f);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = lengths[b]; t < T; ++t)
        for (std::int64_t c = 0; c < ldv; ++c) qkv[(b * T + t) * ldv + c] = 50.0f;
    std::vector<Matrix> want_taps;
    const Matrix want =
        reference_conv(f, "m", kernels, causal, qkv.data() + 2 * d, ldv, B, T, d, H, lengths, &want_taps);
    test::for_each_isa_and_threads([&](Isa, int) {
      f.arena.reset();
      const std::int64_t ldo = 2 * d;
      std::vector<float> out(B * T * ldo, 7.0f);  // Cmix at column d; column 0..d must stay untouched
      MultiScaleConv::Saved saved;
      conv.forward(f.ctx, qkv.data() + 2 * d, ldv, B, T, lengths.data(), out.data() + d, ldo, saved);
      std::vector<float> got(B * T * d);
      for (std::int64_t r = 0; r < B * T; ++r) {
        for (std::int64_t c = 0; c < d; ++c) REQUIRE(out[r * ldo + c] == 7.0f);
        std::copy(out.begin() + r * ldo + d, out.begin() + (r + 1) * ldo, got.begin() + r * d);
      }
      test::require_close(got, want, 1e-5, 1e-4);
      for (std::size_t i = 0; i < kernels.size(); ++i) {
        const float* taps = saved.cells[i].taps;
        test::require_close(std::vector<float>(taps, taps + want_taps[i].size()), want_taps[i], 1e-6, 1e-5);
      }
    });
  }
}

TEST_CASE("muse conv: T = 1 with a centred k = 15 gives w_centre · v, not v", "[muse]") {
  const std::int64_t d = 4, H = 2;
  Fixture f;
  MultiScaleConv conv;
  conv.declare(f.params, "m", d, H, {15}, false, 0.0f);
  f.ready(3);
  const std::vector<std::int32_t> lengths{1};
  std::vector<float> v = test::random_vector(d, 4), out(d);
  MultiScaleConv::Saved saved;
  conv.forward(f.ctx, v.data(), d, 1, 1, lengths.data(), out.data(), d, saved);
  REQUIRE(saved.pi.size() == 1);
  REQUIRE(saved.pi[0] == 1.0f);
  for (std::int64_t h = 0; h < H; ++h) {
    const float centre = saved.cells[0].taps[h * 15 + 7];
    REQUIRE(centre > 0.0f);
    REQUIRE(centre < 0.99f);  // the other 14 taps fall outside the sentence and are not renormalised away
    for (std::int64_t c = h * 2; c < h * 2 + 2; ++c) REQUIRE(out[c] == Approx(centre * v[c]).epsilon(1e-6));
  }
}

TEST_CASE("muse conv: gradients of the gate, filter generators and V match finite differences", "[muse][grad]") {
  const std::int64_t B = 2, T = 6, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{6, 4};
  struct Case {
    std::vector<std::int64_t> kernels;
    bool causal;
    float p;
  };
  for (const Case& c : {Case{{3, 5}, false, 0.0f}, Case{{3, 5}, true, 0.0f}, Case{{4, 15}, false, 0.3f},
                        Case{{2, 15}, true, 0.3f}, Case{{3}, false, 0.0f}}) {
    INFO("kernels " << c.kernels.size() << " causal " << c.causal << " tap dropout " << c.p);
    Fixture f;
    MultiScaleConv conv;
    conv.declare(f.params, "m", d, H, c.kernels, c.causal, c.p);
    f.ready(11);
    f.ctx.training = c.p > 0.0f;
    const RngState rng_state = f.rng.state();  // the same DropConnect mask in every forward
    std::vector<float> v = test::random_vector(B * T * d, 12), w = test::random_vector(B * T * d, 13);
    zero_pad_rows(w, T, d, lengths);
    std::vector<float> out(B * T * d);
    MultiScaleConv::Saved saved;
    auto loss = [&] {
      f.arena.reset();
      f.rng.set_state(rng_state);
      conv.forward(f.ctx, v.data(), d, B, T, lengths.data(), out.data(), d, saved);
      return weighted_sum(out.data(), w);
    };
    f.params.zero_grads();
    loss();
    if (c.p > 0.0f) {  // the mask really drops some taps
      std::int64_t dropped = 0;
      for (std::int64_t i = 0; i < B * T * H * c.kernels[0]; ++i) dropped += saved.cells[0].keep[i] == 0;
      REQUIRE(dropped > 0);
    }
    std::vector<float> dv(v.size(), 0.0f);
    conv.backward(f.ctx, saved, v.data(), d, B, T, lengths.data(), w.data(), d, dv.data(), d);
    if (c.kernels.size() == 1) REQUIRE(f.params.grad(conv.gate)[0] == 0.0f);  // π = 1 whatever α
    check_all_parameters(f.params, loss, {.samples_per_tensor = 10});
    check_gradient("v", v.data(), dv.data(), static_cast<std::int64_t>(v.size()), loss, {.samples_per_tensor = 24}, 14);
    // Padded positions of V feed nothing.
    for (std::int64_t t = lengths[1]; t < T; ++t)
      for (std::int64_t j = 0; j < d; ++j) REQUIRE(dv[(1 * T + t) * d + j] == 0.0f);
  }
}

TEST_CASE("muse mixer: parameters, and forward equals a naive double reference", "[muse]") {
  const std::int64_t B = 2, T = 7, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{7, 3};
  for (const auto& kernels : {std::vector<std::int64_t>{3, 15}, std::vector<std::int64_t>{}}) {
    for (bool causal : {false, true}) {
      INFO("kernels " << kernels.size() << " causal " << causal);
      Fixture f;
      MuseMixer mixer(f.params, "enc.0.self_attn", muse_spec(d, H, kernels, causal));
      f.ready(21);
      REQUIRE(mixer.kind() == (kernels.empty() ? "muse-simple" : "muse"));
      REQUIRE(mixer.cache_width() == 2 * d);
      const std::string n = "enc.0.self_attn";
      // q, k, v weights then biases are contiguous: one [3d, d] GEMM.
      REQUIRE(f.params.info(f.params.find(n + ".k.weight")).offset ==
              f.params.info(f.params.find(n + ".q.weight")).offset + d * d);
      REQUIRE(f.params.info(f.params.find(n + ".v.weight")).offset ==
              f.params.info(f.params.find(n + ".q.weight")).offset + 2 * d * d);
      REQUIRE(f.params.info(f.params.find(n + ".v.bias")).offset ==
              f.params.info(f.params.find(n + ".q.bias")).offset + 2 * d);
      REQUIRE(f.params.info(f.params.find(n + ".o.weight")).shape == Shape{d, kernels.empty() ? d : 2 * d});
      REQUIRE(f.params.info(f.params.find(n + ".o.bias")).shape == Shape{d});
      if (!kernels.empty()) {
        REQUIRE(f.params.info(f.params.find(n + ".conv.0.weight")).shape == Shape{H * 3, d});
        REQUIRE(f.params.info(f.params.find(n + ".conv.1.weight")).shape == Shape{H * 15, d});
        REQUIRE(f.params.info(f.params.find(n + ".gate")).shape == Shape{2});
        REQUIRE_FALSE(f.params.info(f.params.find(n + ".gate")).weight_decay);
      } else {
        REQUIRE(f.params.find(n + ".gate") < 0);
      }
      std::vector<float> x = test::random_vector(B * T * d, 22), y(B * T * d);
      mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      const Matrix want = reference_mixer(f, n, kernels, causal, x, B, T, d, H, lengths);
      test::require_close(y, want, 1e-5, 1e-4);
    }
  }
}

TEST_CASE("muse mixer: gradients of all parameters and the input match finite differences (also MUSE-separate)",
          "[muse][grad]") {
  const std::int64_t B = 2, T = 5, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{5, 3};
  for (const auto& kernels : {std::vector<std::int64_t>{3, 15}, std::vector<std::int64_t>{}}) {
    for (bool causal : {false, true})
      for (bool separate : {false, true}) {
        if (separate && kernels.empty()) continue;  // no cells, nothing to project
        INFO("kernels " << kernels.size() << " causal " << causal << " separate " << separate);
        Fixture f;
        MuseMixer mixer(f.params, "mix", muse_spec(d, H, kernels, causal, 0.0f, separate));
        f.ready(31);
        std::vector<float> x = test::random_vector(B * T * d, 32), w = test::random_vector(B * T * d, 33);
        zero_pad_rows(w, T, d, lengths);
        test::MixerLoss run(f, mixer, x, w, B, T, lengths.data());
        auto loss = [&] { return run.loss(); };
        std::vector<float> dx = run.backward();
        check_all_parameters(f.params, loss, {.samples_per_tensor = 8});
        check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 16},
                       34);
      }
  }
}

TEST_CASE("muse mixer: V gets its gradient from attention, the conv data path and every filter generator",
          "[muse][grad]") {
  // dWv and dbv are sums of dV over rows, so finite differences on them check
  // the total of all of V's paths; zeroing the conv half of Wo shows the conv
  // paths are part of that total.
  const std::int64_t B = 1, T = 6, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{6};
  Fixture f;
  MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 5}, false));
  f.ready(41);
  std::vector<float> x = test::random_vector(B * T * d, 42), w = test::random_vector(B * T * d, 43);
  std::vector<float> y(B * T * d), dx(x.size(), 0.0f);
  std::unique_ptr<TokenMixer::Saved> saved;
  auto loss = [&] {
    f.arena.reset();
    saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    return weighted_sum(y.data(), w);
  };
  const ParamId wv = f.params.find("mix.v.weight"), bv = f.params.find("mix.v.bias");
  auto grads_of_v = [&] {
    f.params.zero_grads();
    loss();
    mixer.backward(f.ctx, *saved, w.data(), dx.data());
    std::vector<float> g(f.params.grad(wv), f.params.grad(wv) + d * d);
    g.insert(g.end(), f.params.grad(bv), f.params.grad(bv) + d);
    return g;
  };
  const std::vector<float> full = grads_of_v();
  check_gradient("mix.v.weight", f.params.value(wv), full.data(), d * d, loss, {.samples_per_tensor = 24}, 44);
  check_gradient("mix.v.bias", f.params.value(bv), full.data() + d * d, d, loss, {.samples_per_tensor = 8}, 45);
  // Attention alone: with the conv half of Wo zeroed the cells receive no gradient.
  float* wo = f.params.value(f.params.find("mix.o.weight"));  // [d, 2d]
  for (std::int64_t j = 0; j < d; ++j) std::fill(wo + j * 2 * d + d, wo + (j + 1) * 2 * d, 0.0f);
  const std::vector<float> attention_only = grads_of_v();
  double diff = 0.0;
  for (std::size_t i = 0; i < full.size(); ++i) diff += std::abs(full[i] - attention_only[i]);
  REQUIRE(diff > 1e-3);
  REQUIRE(f.params.grad(f.params.find("mix.conv.0.weight"))[0] == 0.0f);
}

TEST_CASE("muse mixer: causal outputs never see later tokens", "[muse]") {
  const std::int64_t T = 9, d = 8, H = 2;
  Fixture f;
  MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, true));
  f.ready(51);
  test::require_causal(f, mixer, d, T);
}

TEST_CASE("muse mixer: step() equals the full causal forward at every position (also MUSE-separate)", "[muse]") {
  const std::int64_t d = 8, H = 2, n = 2;
  for (const auto& kernels :
       {std::vector<std::int64_t>{3, 15}, std::vector<std::int64_t>{4}, std::vector<std::int64_t>{}}) {
    for (std::int64_t T : {7, 20})
      for (bool separate : {false, true}) {
        if (separate && kernels.empty()) continue;
        INFO("kernels " << kernels.size() << " T " << T << " separate " << separate);
        Fixture f;
        MuseMixer mixer(f.params, "dec", muse_spec(d, H, kernels, true, 0.0f, separate));
        f.ready(61);
        test::require_steps_equal_forward(f, mixer, n, T, d, -99.0f);
      }
  }
}

TEST_CASE("muse mixer: a sentence alone equals the same sentence in a padded batch (also MUSE-separate)", "[muse]") {
  const std::int64_t d = 8, H = 2, L = 4, T = 9;
  for (bool causal : {false, true})
    for (bool separate : {false, true}) {
      INFO("causal " << causal << " separate " << separate);
      Fixture f;
      MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, causal, 0.0f, separate));
      f.ready(71);
      test::require_alone_equals_padded(f, mixer, d, L, T);
    }
}

TEST_CASE("muse mixer: tap dropout is the identity at p = 0 and in evaluation, a fixed mask in training", "[muse]") {
  const std::int64_t B = 2, T = 6, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{6, 5};
  std::vector<float> x = test::random_vector(B * T * d, 82);
  auto run = [&](float p, bool training, std::uint64_t seed) {
    Fixture f;
    MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, false, p));
    f.ready(81);
    f.rng = Rng(seed);
    f.ctx.training = training;
    std::vector<float> y(B * T * d);
    mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    return y;
  };
  const std::vector<float> eval = run(0.0f, false, 1);
  REQUIRE(run(0.0f, true, 1) == eval);
  REQUIRE(run(0.5f, false, 1) == eval);
  const std::vector<float> train = run(0.5f, true, 1);
  REQUIRE(train != eval);
  REQUIRE(run(0.5f, true, 1) == train);  // the mask is a function of the Rng state
  REQUIRE(run(0.5f, true, 2) != train);
}

TEST_CASE("muse mixer: export_maps gives attention rows, the gate and per-token taps", "[muse]") {
  const std::int64_t B = 2, T = 6, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{6, 4};
  Fixture f;
  MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, true, 0.5f));
  f.ready(91);
  f.ctx.training = true;  // the exported taps are the undropped ones
  std::vector<float> x = test::random_vector(B * T * d, 92), y(B * T * d);
  auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
  const MixerMaps maps = mixer.export_maps(*saved, 1);
  REQUIRE(maps.heads == H);
  REQUIRE(maps.length == 4);
  REQUIRE(maps.weights.size() == static_cast<std::size_t>(H * 4 * 4));
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < 4; ++i) {
      double row = 0.0;
      for (std::int64_t j = 0; j < 4; ++j) {
        const float p = maps.weights[(h * 4 + i) * 4 + j];
        if (j > i) REQUIRE(p == 0.0f);  // causal
        row += p;
      }
      REQUIRE(row == Approx(1.0).epsilon(1e-5));
    }
  REQUIRE(maps.extras["kernels"] == nlohmann::json::array({3, 15}));
  const std::vector<float> pi = maps.extras["gate"].get<std::vector<float>>();
  REQUIRE(pi.size() == 2);
  REQUIRE(pi[0] + pi[1] == Approx(1.0f));
  const nlohmann::json& taps = maps.extras["taps"];
  REQUIRE(taps.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t k = i == 0 ? 3 : 15;
    REQUIRE(taps[i].size() == 4);
    for (const auto& token : taps[i]) {
      REQUIRE(token.size() == static_cast<std::size_t>(H));
      for (const auto& head : token) {
        REQUIRE(head.size() == k);
        double sum = 0.0;
        for (const auto& w : head) sum += w.get<double>();
        REQUIRE(sum == Approx(1.0).epsilon(1e-5));
      }
    }
  }
  Fixture g;
  MuseMixer simple(g.params, "mix", muse_spec(d, H, {}, false));
  g.ready(93);
  auto s2 = simple.forward(g.ctx, x.data(), y.data(), B, T, lengths.data());
  REQUIRE(simple.export_maps(*s2, 0).extras.is_null());
}

TEST_CASE("muse mixer: forward and backward are bitwise the same for 1 and 2 threads", "[muse]") {
  const std::int64_t B = 3, T = 7, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{7, 2, 5};
  std::vector<float> x = test::random_vector(B * T * d, 102), w = test::random_vector(B * T * d, 103);
  auto run = [&](int threads) {
    const int saved_threads = num_threads();
    set_threads(threads);
    Fixture f;
    MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, false, 0.2f));
    f.ready(101);
    f.ctx.training = true;
    std::vector<float> y(B * T * d), dx(x.size(), 0.0f);
    f.params.zero_grads();
    auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    mixer.backward(f.ctx, *saved, w.data(), dx.data());
    set_threads(saved_threads);
    std::vector<float> all = y;
    all.insert(all.end(), dx.begin(), dx.end());
    all.insert(all.end(), f.params.grads().begin(), f.params.grads().end());
    return all;
  };
  REQUIRE(run(1) == run(2));
}

// MUSE-separate: the cells read their own projection x · Wcᵀ (the paper's
// "unified semantic space" ablation), checked like MUSE itself.
TEST_CASE("muse-separate mixer: forward equals the naive reference, and V no longer feeds the cells", "[muse]") {
  const std::int64_t B = 2, T = 7, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{7, 3};
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    MuseMixer mixer(f.params, "mix", muse_spec(d, H, {3, 15}, causal, 0.0f, true));
    f.ready(111);
    REQUIRE(mixer.separate_conv_projection());
    REQUIRE(mixer.cache_width() == 3 * d);
    const ParamId wc = f.params.find("mix.conv_in.weight");
    REQUIRE(wc >= 0);
    REQUIRE(f.params.info(wc).shape == Shape{d, d});
    REQUIRE(f.params.find("mix.conv_in.bias") < 0);
    std::vector<float> x = test::random_vector(B * T * d, 112), y(B * T * d);
    mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    test::require_close(y, reference_mixer(f, "mix", {3, 15}, causal, x, B, T, d, H, lengths, true), 1e-5, 1e-4);
    // The shared-V reference must differ: otherwise this test could not tell the variants apart.
    const Matrix shared = reference_mixer(f, "mix", {3, 15}, causal, x, B, T, d, H, lengths, false);
    double diff = 0.0;
    for (std::int64_t r = 0; r < B * T; ++r)
      if (r % T < lengths[r / T])
        for (std::int64_t j = 0; j < d; ++j) diff += std::abs(y[r * d + j] - shared[r * d + j]);
    REQUIRE(diff > 1e-3);
  }
  Fixture g;  // without conv cells there is nothing to project: MUSE-simple
  MuseMixer simple(g.params, "mix", muse_spec(d, H, {}, false, 0.0f, true));
  REQUIRE_FALSE(simple.separate_conv_projection());
  REQUIRE(g.params.find("mix.conv_in.weight") < 0);
}
