// LightConv and DynamicConv (Wu et al. 2019): the mixer against a naive
// double-precision reference, central finite differences, causality,
// incremental decoding, padding invariance, DropConnect and its maps; the
// kernel size per layer; the presets' shapes and parameter counts.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/model/config.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/lightconv/lightconv_mixer.h"
#include "grad_check.h"
#include "mixer_checks.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;

namespace {

using Matrix = std::vector<double>;

struct Fixture : attn::test::LayerFixture {
  void ready(std::uint64_t seed = 1) { LayerFixture::ready(seed, 0.6f); }
};

MixerSpec conv_spec(bool dynamic, std::int64_t d, std::int64_t heads, std::int64_t kernel, bool causal,
                    float weight_dropout = 0.0f) {
  return test::mixer_spec(dynamic ? "dynamicconv" : "lightconv", d, heads, causal,
                          {{causal ? "lightconv_decoder_kernels" : "lightconv_encoder_kernels", {kernel}},
                           {"lightconv_weight_dropout", weight_dropout}});
}

// Naive forward in double: y [B·T, d] (valid rows only; pad rows 0), and the
// normalised taps [B·T, H, k] when taps_out is given.
Matrix reference(const Fixture& f, const std::string& name, bool dynamic, std::int64_t K, bool causal,
                 const std::vector<float>& x, std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t H,
                 const std::vector<std::int32_t>& lengths, Matrix* taps_out = nullptr) {
  const std::int64_t rows = B * T, dh = d / H, P = causal ? K - 1 : K / 2;
  const float* win = f.value(name + ".in.weight");  // [2d, d]
  const float* bin = f.value(name + ".in.bias");    // [2d]
  std::vector<float> u(rows * d, 0.0f);             // GLU output, rounded to float as the mixer's
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < lengths[b]; ++t) {
      const std::int64_t r = b * T + t;
      for (std::int64_t c = 0; c < d; ++c) {
        double a = bin[c], g = bin[d + c];
        for (std::int64_t j = 0; j < d; ++j) {
          a += double(x[r * d + j]) * win[c * d + j];
          g += double(x[r * d + j]) * win[(d + c) * d + j];
        }
        u[r * d + c] = static_cast<float>(a / (1.0 + std::exp(-g)));
      }
    }
  const float* wconv = f.value(name + ".conv.weight");  // [H, k] or [H·k, d]
  Matrix taps(rows * H * K, 0.0), conv(rows * d, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < lengths[b]; ++t)
      for (std::int64_t h = 0; h < H; ++h) {
        std::vector<double> z(K);
        for (std::int64_t kk = 0; kk < K; ++kk) {
          if (!dynamic) {
            z[kk] = wconv[h * K + kk];
            continue;
          }
          double s = 0.0;
          for (std::int64_t c = 0; c < d; ++c) s += double(u[(b * T + t) * d + c]) * wconv[(h * K + kk) * d + c];
          z[kk] = s;
        }
        const double top = *std::max_element(z.begin(), z.end());
        double sum = 0.0;
        for (double& e : z) sum += e = std::exp(e - top);
        for (std::int64_t kk = 0; kk < K; ++kk) {
          const double w = z[kk] / sum;
          taps[((b * T + t) * H + h) * K + kk] = w;
          const std::int64_t s = t + kk - P;
          if (s < 0 || s >= lengths[b]) continue;  // outside the sentence: zeros
          for (std::int64_t c = h * dh; c < (h + 1) * dh; ++c) conv[(b * T + t) * d + c] += w * u[(b * T + s) * d + c];
        }
      }
  const float* wo = f.value(name + ".o.weight");
  const float* bo = f.value(name + ".o.bias");
  Matrix y(rows * d, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < lengths[b]; ++t)
      for (std::int64_t j = 0; j < d; ++j) {
        double s = bo[j];
        for (std::int64_t c = 0; c < d; ++c) s += conv[(b * T + t) * d + c] * wo[j * d + c];
        y[(b * T + t) * d + j] = s;
      }
  if (taps_out) *taps_out = std::move(taps);
  return y;
}

void zero_pad_rows(std::vector<float>& v, std::int64_t T, std::int64_t d, const std::vector<std::int32_t>& lengths) {
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::int64_t t = lengths[b]; t < T; ++t)
      std::fill(v.begin() + (b * T + t) * d, v.begin() + (b * T + t + 1) * d, 0.0f);
}

}  // namespace

TEST_CASE("lightconv mixer: parameters, and forward equals a naive double reference", "[lightconv]") {
  const std::int64_t B = 3, T = 7, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{7, 4, 1};
  for (bool dynamic : {false, true})
    for (bool causal : {false, true})
      for (std::int64_t K : {1, 3, 15}) {  // 15 > T: most taps fall outside every sentence
        INFO((dynamic ? "dynamic" : "light") << " causal " << causal << " k " << K);
        Fixture f;
        LightConvMixer mixer(f.params, "m", conv_spec(dynamic, d, H, K, causal),
                             dynamic ? TapSource::predicted : TapSource::fixed);
        f.ready(3);
        REQUIRE(mixer.kind() == (dynamic ? "dynamicconv" : "lightconv"));
        REQUIRE(mixer.kernel() == K);
        REQUIRE(mixer.cache_width() == d);
        REQUIRE(f.params.info(f.params.find("m.in.weight")).shape == Shape{2 * d, d});
        REQUIRE(f.params.info(f.params.find("m.in.bias")).shape == Shape{2 * d});
        REQUIRE(f.params.info(f.params.find("m.conv.weight")).shape == (dynamic ? Shape{H * K, d} : Shape{H, K}));
        REQUIRE(f.params.info(f.params.find("m.o.weight")).shape == Shape{d, d});
        REQUIRE(f.params.entries().size() == 5);
        // Pad rows hold large values that must not leak into real ones.
        std::vector<float> x = test::random_vector(B * T * d, 4), y(B * T * d);
        for (std::int64_t b = 0; b < B; ++b)
          for (std::int64_t t = lengths[b]; t < T; ++t)
            for (std::int64_t j = 0; j < d; ++j) x[(b * T + t) * d + j] = 40.0f;
        Matrix want_taps;
        const Matrix want = reference(f, "m", dynamic, K, causal, x, B, T, d, H, lengths, &want_taps);
        test::for_each_isa_and_threads([&](Isa, int) {
          f.arena.reset();
          auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
          std::vector<float> got = y;
          zero_pad_rows(got, T, d, lengths);
          test::require_close(got, want, 1e-5, 1e-4);
          const float* taps = static_cast<const LightConvMixer::Saved&>(*saved).cell.taps;
          test::require_close(std::vector<float>(taps, taps + want_taps.size()), want_taps, 1e-6, 1e-5);
        });
      }
}

TEST_CASE("lightconv mixer: gradients of all parameters and the input match finite differences (with DropConnect)",
          "[lightconv][grad]") {
  const std::int64_t B = 2, T = 6, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{6, 4};
  struct Case {
    bool dynamic, causal;
    std::int64_t kernel;
    float p;
  };
  for (const Case& c : {Case{false, false, 3, 0.0f}, Case{false, true, 3, 0.0f}, Case{false, false, 7, 0.3f},
                        Case{false, true, 15, 0.3f}, Case{true, false, 3, 0.0f}, Case{true, true, 3, 0.0f},
                        Case{true, false, 7, 0.3f}, Case{true, true, 15, 0.3f}}) {
    INFO((c.dynamic ? "dynamic" : "light") << " causal " << c.causal << " k " << c.kernel << " p " << c.p);
    Fixture f;
    LightConvMixer mixer(f.params, "mix", conv_spec(c.dynamic, d, H, c.kernel, c.causal, c.p),
                         c.dynamic ? TapSource::predicted : TapSource::fixed);
    f.ready(11);
    f.ctx.training = c.p > 0.0f;
    const RngState rng_state = f.rng.state();  // the same DropConnect mask in every forward
    std::vector<float> x = test::random_vector(B * T * d, 12), w = test::random_vector(B * T * d, 13);
    zero_pad_rows(w, T, d, lengths);
    test::MixerLoss run(f, mixer, x, w, B, T, lengths.data());
    auto loss = [&] {
      f.rng.set_state(rng_state);
      return run.loss();
    };
    f.rng.set_state(rng_state);
    std::vector<float> dx = run.backward();
    if (c.p > 0.0f) {  // the mask really drops some taps
      const auto& s = static_cast<const LightConvMixer::Saved&>(run.saved());
      REQUIRE(s.cell.keep != nullptr);
      std::int64_t dropped = 0;
      for (std::int64_t i = 0; i < B * T * H * c.kernel; ++i) dropped += s.cell.keep[i] == 0;
      REQUIRE(dropped > 0);
    }
    check_all_parameters(f.params, loss, {.samples_per_tensor = 10});
    check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 24}, 14);
    for (std::int64_t t = lengths[1]; t < T; ++t)  // padded inputs feed nothing
      for (std::int64_t j = 0; j < d; ++j) REQUIRE(dx[(1 * T + t) * d + j] == 0.0f);
  }
}

TEST_CASE("lightconv mixer: causal outputs never see later tokens", "[lightconv]") {
  const std::int64_t T = 9, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{9};
  for (bool dynamic : {false, true}) {
    INFO((dynamic ? "dynamic" : "light"));
    Fixture f;
    LightConvMixer mixer(f.params, "mix", conv_spec(dynamic, d, H, 4, true),
                         dynamic ? TapSource::predicted : TapSource::fixed);
    f.ready(51);
    test::require_causal(f, mixer, d, T);
    // The encoder's centred window does see the next token.
    std::vector<float> x = test::random_vector(T * d, 52), y1(T * d), y2(T * d);
    Fixture g;
    LightConvMixer enc(g.params, "mix", conv_spec(dynamic, d, H, 3, false),
                       dynamic ? TapSource::predicted : TapSource::fixed);
    g.ready(53);
    enc.forward(g.ctx, x.data(), y1.data(), 1, T, lengths.data());
    std::vector<float> x2 = x;
    for (std::int64_t j = 0; j < d; ++j) x2[1 * d + j] += 1.5f;
    g.arena.reset();
    enc.forward(g.ctx, x2.data(), y2.data(), 1, T, lengths.data());
    bool changed = false;
    for (std::int64_t i = 0; i < d; ++i) changed |= y1[i] != y2[i];
    REQUIRE(changed);
  }
}

TEST_CASE("lightconv mixer: step() with only the last k − 1 cached inputs equals the full causal forward",
          "[lightconv]") {
  const std::int64_t d = 8, H = 2, n = 2;
  for (bool dynamic : {false, true})
    for (std::int64_t K : {1, 3, 4, 15})
      for (std::int64_t T : {7, 20}) {
        INFO((dynamic ? "dynamic" : "light") << " k " << K << " T " << T);
        Fixture f;
        LightConvMixer mixer(f.params, "dec", conv_spec(dynamic, d, H, K, true),
                             dynamic ? TapSource::predicted : TapSource::fixed);
        f.ready(61);
        // Entries older than the window are poisoned: a read of one would show as NaN.
        const float nan = std::numeric_limits<float>::quiet_NaN();
        test::require_steps_equal_forward(f, mixer, n, T, d, nan, [&](std::int64_t t, std::vector<float>& cache) {
          for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t s = 0; s <= t - K; ++s) std::fill_n(cache.begin() + (i * T + s) * d, d, nan);
        });
      }
}

TEST_CASE("lightconv mixer: a sentence alone equals the same sentence in a padded batch", "[lightconv]") {
  const std::int64_t d = 8, H = 2, L = 4, T = 9;
  for (bool dynamic : {false, true})
    for (bool causal : {false, true}) {
      INFO((dynamic ? "dynamic" : "light") << " causal " << causal);
      Fixture f;
      LightConvMixer mixer(f.params, "mix", conv_spec(dynamic, d, H, 7, causal),
                           dynamic ? TapSource::predicted : TapSource::fixed);
      f.ready(71);
      test::require_alone_equals_padded(f, mixer, d, L, T);
    }
}

TEST_CASE("lightconv mixer: DropConnect is the identity at p = 0 and in evaluation, a per-token mask in training",
          "[lightconv]") {
  const std::int64_t B = 2, T = 6, d = 8, H = 2, K = 3;
  const std::vector<std::int32_t> lengths{6, 5};
  std::vector<float> x = test::random_vector(B * T * d, 82);
  for (bool dynamic : {false, true}) {
    INFO((dynamic ? "dynamic" : "light"));
    std::vector<std::uint8_t> keep;
    auto run = [&](float p, bool training, std::uint64_t seed) {
      Fixture f;
      LightConvMixer mixer(f.params, "mix", conv_spec(dynamic, d, H, K, false, p),
                           dynamic ? TapSource::predicted : TapSource::fixed);
      f.ready(81);
      f.rng = Rng(seed);
      f.ctx.training = training;
      std::vector<float> y(B * T * d);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      const auto& s = static_cast<const LightConvMixer::Saved&>(*saved);
      keep.assign(s.cell.keep ? s.cell.keep : nullptr, s.cell.keep ? s.cell.keep + B * T * H * K : nullptr);
      return y;
    };
    const std::vector<float> eval = run(0.0f, false, 1);
    REQUIRE(run(0.0f, true, 1) == eval);
    REQUIRE(run(0.5f, false, 1) == eval);
    const std::vector<float> train = run(0.5f, true, 1);
    REQUIRE(train != eval);
    // As fairseq's, the mask is drawn per token, head and tap, also for LightConv's shared kernel.
    bool rows_differ = false;
    for (std::int64_t r = 1; r < lengths[0]; ++r)
      rows_differ |= !std::equal(keep.begin(), keep.begin() + H * K, keep.begin() + r * H * K);
    REQUIRE(rows_differ);
    REQUIRE(run(0.5f, true, 1) == train);  // the mask is a function of the Rng state
    REQUIRE(run(0.5f, true, 2) != train);
  }
}

TEST_CASE("lightconv mixer: export_maps draws each token's taps as a band whose rows sum to 1", "[lightconv]") {
  const std::int64_t B = 2, T = 8, d = 8, H = 2;
  const std::vector<std::int32_t> lengths{8, 6};
  for (bool dynamic : {false, true})
    for (bool causal : {false, true}) {
      INFO((dynamic ? "dynamic" : "light") << " causal " << causal);
      const std::int64_t K = causal ? 4 : 5, P = causal ? K - 1 : K / 2;
      Fixture f;
      LightConvMixer mixer(f.params, "mix", conv_spec(dynamic, d, H, K, causal, 0.5f),
                           dynamic ? TapSource::predicted : TapSource::fixed);
      f.ready(91);
      f.ctx.training = true;  // the exported taps are the undropped ones
      std::vector<float> x = test::random_vector(B * T * d, 92), y(B * T * d);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      const MixerMaps maps = mixer.export_maps(*saved, 1);
      const std::int64_t L = 6;
      REQUIRE(maps.heads == H);
      REQUIRE(maps.length == L);
      REQUIRE(maps.extras["kernel"] == K);
      REQUIRE(maps.extras["left"] == P);
      REQUIRE(maps.extras["right"] == K - 1 - P);
      const nlohmann::json& taps = maps.extras["taps"];
      REQUIRE(taps.size() == static_cast<std::size_t>(L));
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < L; ++i) {
          const std::vector<float> w = taps[i][h].get<std::vector<float>>();
          REQUIRE(w.size() == static_cast<std::size_t>(K));
          double sum = 0.0, inside = 0.0;
          for (std::int64_t kk = 0; kk < K; ++kk) {
            sum += w[kk];
            if (i + kk - P >= 0 && i + kk - P < L) inside += w[kk];
          }
          REQUIRE(sum == Approx(1.0).epsilon(1e-5));
          if (!dynamic) REQUIRE(w == taps[0][h].get<std::vector<float>>());  // one kernel for every token
          double row = 0.0;
          for (std::int64_t j = 0; j < L; ++j) {
            const float p = maps.weights[(h * L + i) * L + j];
            const std::int64_t kk = j - i + P;
            if (kk < 0 || kk >= K) {
              REQUIRE(p == 0.0f);  // outside the window (and, causal, the future)
            } else {
              REQUIRE(p == Approx(w[kk] / inside).epsilon(1e-5));
            }
            row += p;
          }
          REQUIRE(row == Approx(1.0).epsilon(1e-5));
        }
    }
}

TEST_CASE("lightconv: the kernel size grows with depth, as fairseq's IWSLT De-En lists", "[lightconv]") {
  model::ModelConfig c = model::preset("lightconv");
  c.vocab_size = 20;
  c.enc_layers = 9;
  c.dec_layers = 8;
  const std::vector<std::int64_t> enc{3, 7, 15, 31, 31, 31, 31, 31, 31}, dec{3, 7, 15, 31, 31, 31, 31, 31};
  for (std::int64_t i = 0; i < c.enc_layers; ++i) {
    REQUIRE(c.encoder_mixer(i).mechanism == "lightconv");
    REQUIRE(c.encoder_mixer(i).layer == i);
    REQUIRE(lightconv_kernel(c.encoder_mixer(i)) == enc[static_cast<std::size_t>(i)]);
  }
  for (std::int64_t i = 0; i < c.dec_layers; ++i) {
    REQUIRE(c.decoder_self_mixer(i).causal);
    REQUIRE(lightconv_kernel(c.decoder_self_mixer(i)) == dec[static_cast<std::size_t>(i)]);
  }
  c.options["lightconv_decoder_kernels"] = {2, 5};
  REQUIRE(lightconv_kernel(c.decoder_self_mixer(0)) == 2);
  REQUIRE(lightconv_kernel(c.decoder_self_mixer(7)) == 5);
  // The options are left out of the file at their preset (older files stay byte for byte) and kept when set.
  REQUIRE(model::preset("dynamicconv").to_json().contains("lightconv_encoder_kernels") == false);
  REQUIRE(c.to_json()["lightconv_decoder_kernels"] == nlohmann::json({2, 5}));
  REQUIRE(model::ModelConfig::from_json(c.to_json()).options["lightconv_decoder_kernels"] == nlohmann::json({2, 5}));
  // Even sizes cannot be centred: refused in the encoder, allowed in the causal decoder.
  c.options["lightconv_encoder_kernels"] = {3, 4};
  REQUIRE_THROWS_WITH(c.validate(), Catch::Contains("--lightconv-encoder-kernels") && Catch::Contains("odd"));
}

TEST_CASE("lightconv, dynamicconv: the reference preset's layers and parameter counts", "[lightconv]") {
  auto count = [](const std::string& arch) {
    model::ModelConfig c = model::preset(arch);
    c.vocab_size = 1000;
    const model::Seq2Seq m(c);
    return m.params().total_floats();
  };
  const std::int64_t transformer = count("transformer"), light = count("lightconv"), dynamic = count("dynamicconv");
  // Per layer, attention's four [d, d] projections (4d² + 4d) become [2d, d] in, [d, d] out
  // (3d² + 3d) and the kernel: H·k (light) or H·k·d (dynamic), k = 3, 7, 15 in both stacks.
  const std::int64_t d = 256, H = 4, layers = 6, kernels = 2 * (3 + 7 + 15);
  REQUIRE(transformer - light == layers * (d * d + d) - H * kernels);
  REQUIRE(dynamic - light == H * kernels * d - H * kernels);
  model::ModelConfig c = model::preset("dynamicconv");
  c.vocab_size = 1000;
  const model::Seq2Seq m(c);
  REQUIRE(m.params().info(m.params().find("enc.2.self_attn.conv.weight")).shape == Shape{H * 15, d});
  REQUIRE(m.params().info(m.params().find("dec.0.self_attn.conv.weight")).shape == Shape{H * 3, d});
}
