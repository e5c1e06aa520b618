// DiSA (DiSAN's directional multi-dimensional self-attention): the mixer
// against a naive double reference that builds the T×T×d_h tensor, the held
// tensors themselves, finite-difference gradients, rows with no key,
// saturated compatibilities, causality and incremental decoding, padding.
#include "grad_check.h"
#include "mixer_checks.h"

#include <cstring>
#include <memory>

#include "attn/core/arena.h"
#include "attn/core/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/nn/mechanisms/disa/disa.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::require_valid_rows_close;
using attn::test::zero_padded_rows;

namespace {

using Fixture = attn::test::LayerFixture;

MixerSpec disa_spec(std::int64_t d, std::int64_t heads, bool causal) {
  return test::mixer_spec("disa", d, heads, causal);
}

// The whole mixer in double, written from DiSAN's equations:
// f_ijk = c·tanh((W1 v_i + W2 v_j + b)_k / c) + M_ij, P = softmax_j(f), O = Σ_j P ⊙ v_j,
// G = σ(W_g [v; O] + b_g), U = G ⊙ v + (1 − G) ⊙ O, y = U W_oᵀ + b_o.
struct Reference {
  std::vector<double> y, o, gate;  // [B·T, d]; only valid rows are filled
  std::vector<double> p, tanh;     // [B, H, T, T, d_h]: P and tanh(a/c), 0 where not allowed
  std::vector<double> maps;        // [B, H, T, T]: P averaged over the features
  double a_max_abs = 0;            // the largest |W1 v_i + W2 v_j + b| over allowed pairs
};

template <class Real>
Reference reference(const Fixture& f, const std::string& name, const MixerSpec& spec, const std::vector<Real>& x,
                    std::int64_t B, std::int64_t T, const std::vector<std::int32_t>& lengths) {
  const std::int64_t d = spec.d, H = spec.heads, dh = d / H;
  const double c_scale = 5.0;
  const float* wv = f.value(name + ".v.weight");
  const float* bv = f.value(name + ".v.bias");
  const float* wo = f.value(name + ".o.weight");
  const float* bo = f.value(name + ".o.bias");
  const float* w1 = f.value(name + ".f1.weight");
  const float* w2 = f.value(name + ".f2.weight");
  const float* bf = f.value(name + ".f.bias");
  const float* wg = f.value(name + ".gate.weight");
  const float* bg = f.value(name + ".gate.bias");
  Reference ref;
  ref.y.assign(B * T * d, 0.0);
  ref.o.assign(B * T * d, 0.0);
  ref.gate.assign(B * T * d, 0.0);
  ref.p.assign(B * H * T * T * dh, 0.0);
  ref.tanh.assign(B * H * T * T * dh, 0.0);
  ref.maps.assign(B * H * T * T, 0.0);
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t L = lengths[b];
    std::vector<double> v(L * d), u(L * d);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t c = 0; c < d; ++c) {
        double s = bv[c];
        for (std::int64_t m = 0; m < d; ++m) s += wv[c * d + m] * static_cast<double>(x[(b * T + i) * d + m]);
        v[i * d + c] = s;
      }
    for (std::int64_t h = 0; h < H; ++h) {
      auto vh = [&](std::int64_t j, std::int64_t c) { return v[j * d + h * dh + c]; };
      std::vector<double> w1v(L * dh), w2v(L * dh);
      for (std::int64_t j = 0; j < L; ++j)
        for (std::int64_t k = 0; k < dh; ++k) {
          double s1 = 0, s2 = 0;
          for (std::int64_t m = 0; m < dh; ++m) {
            s1 += w1[(h * dh + k) * dh + m] * vh(j, m);
            s2 += w2[(h * dh + k) * dh + m] * vh(j, m);
          }
          w1v[j * dh + k] = s1;
          w2v[j * dh + k] = s2;
        }
      auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        return (((b * H + h) * T + i) * T + j) * dh + k;
      };
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> o(dh, 0.0);
        for (std::int64_t k = 0; k < dh; ++k) {
          // The feature's softmax over keys, with the −∞ of the mask as "not a term".
          double den = 0;
          for (std::int64_t j = 0; j < L; ++j) {
            if (!test::directional_allowed(spec, h, i, j)) continue;
            const double a = w1v[i * dh + k] + w2v[j * dh + k] + bf[h * dh + k];
            ref.a_max_abs = std::max(ref.a_max_abs, std::abs(a));
            ref.tanh[at(i, j, k)] = std::tanh(a / c_scale);
            ref.p[at(i, j, k)] = std::exp(c_scale * std::tanh(a / c_scale));
            den += ref.p[at(i, j, k)];
          }
          for (std::int64_t j = 0; j < L; ++j)
            if (test::directional_allowed(spec, h, i, j)) {
              ref.p[at(i, j, k)] /= den;
              o[k] += ref.p[at(i, j, k)] * vh(j, k);
            }
        }
        for (std::int64_t j = 0; j < L; ++j) {
          double mean = 0;
          for (std::int64_t k = 0; k < dh; ++k) mean += ref.p[at(i, j, k)];
          ref.maps[((b * H + h) * T + i) * T + j] = mean / dh;
        }
        for (std::int64_t k = 0; k < dh; ++k) {
          double z = bg[h * dh + k];
          for (std::int64_t m = 0; m < dh; ++m)
            z += wg[(h * dh + k) * 2 * dh + m] * vh(i, m) + wg[(h * dh + k) * 2 * dh + dh + m] * o[m];
          const double g = 1.0 / (1.0 + std::exp(-z));
          ref.o[(b * T + i) * d + h * dh + k] = o[k];
          ref.gate[(b * T + i) * d + h * dh + k] = g;
          u[i * d + h * dh + k] = g * vh(i, k) + (1 - g) * o[k];
        }
      }
    }
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t c = 0; c < d; ++c) {
        double s = bo[c];
        for (std::int64_t m = 0; m < d; ++m) s += wo[c * d + m] * u[i * d + m];
        ref.y[(b * T + i) * d + c] = s;
      }
  }
  return ref;
}

}  // namespace

TEST_CASE("disa: the mixer equals the naive double reference, and holds the T×T×d_h tensors it computed", "[disa]") {
  struct Case {
    std::int64_t d, heads;
    bool causal;
  };
  for (const Case& cs : {Case{8, 2, false}, Case{12, 4, false}, Case{8, 2, true}, Case{9, 3, true}}) {
    INFO("d " << cs.d << " heads " << cs.heads << " causal " << cs.causal);
    Fixture f;
    const MixerSpec spec = disa_spec(cs.d, cs.heads, cs.causal);
    DisaMixer mixer(f.params, "disa", spec);
    f.ready(7);
    const std::int64_t B = 2, T = 6, d = cs.d, H = cs.heads, dh = d / H;
    const std::vector<std::int32_t> lengths{6, 4};
    const std::vector<float> x = test::random_vector(B * T * d, 11);
    const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
    test::for_each_isa_and_threads([&](Isa, int) {
      f.arena.reset();
      std::vector<float> y(B * T * d), y2(B * T * d);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-6, 2e-5);
      REQUIRE(kernels::all_finite(y.data(), B * T * d));
      // The forward keeps the two [B, H, T, T, d_h] tensors (what Fast-DiSA removes): P and tanh(a/c),
      // element for element the reference's, 0 at masked and padded pairs.
      const auto& s = static_cast<const DisaMixer::Saved&>(*saved);
      REQUIRE(f.arena.used_floats() >= static_cast<std::size_t>(2 * B * H * T * T * dh));
      for (std::int64_t n = 0; n < B * H * T * T * dh; ++n) {
        INFO("element " << n);
        REQUIRE(std::abs(s.p[n] - ref.p[n]) <= 1e-6);
        REQUIRE(std::abs(s.tanh[n] - ref.tanh[n]) <= 1e-6);
      }
      mixer.forward(f.ctx, x.data(), y2.data(), B, T, lengths.data());
      REQUIRE(std::memcmp(y.data(), y2.data(), sizeof(float) * y.size()) == 0);  // same threads: bitwise
      // Maps: the feature-mean of P, rows summing to 1 (or all 0 with no key), Fast-DiSA's extras.
      for (std::int64_t b = 0; b < B; ++b) {
        const MixerMaps maps = mixer.export_maps(*saved, b);
        const std::int64_t L = lengths[b];
        test::require_map_shape(maps, H, L);
        REQUIRE(maps.extras["averaged_over_features"] == true);
        for (std::int64_t h = 0; h < H; ++h) {
          REQUIRE(maps.extras["directions"][h] == (cs.causal || h < H / 2 ? "forward" : "backward"));
          for (std::int64_t i = 0; i < L; ++i) {
            double row = 0;
            bool any = false;
            for (std::int64_t j = 0; j < L; ++j) {
              const float got = maps.weights[(h * L + i) * L + j];
              REQUIRE(std::abs(got - ref.maps[((b * H + h) * T + i) * T + j]) <= 1e-6);
              if (!test::directional_allowed(spec, h, i, j)) REQUIRE(got == 0.0f);
              any |= test::directional_allowed(spec, h, i, j);
              row += got;
            }
            REQUIRE(std::abs(row - (any ? 1.0 : 0.0)) <= 1e-5);
            double mean = 0;
            for (std::int64_t c = 0; c < dh; ++c) mean += ref.gate[(b * T + i) * d + h * dh + c];
            REQUIRE(std::abs(maps.extras["fusion_gate"][h][i].get<double>() - mean / dh) <= 1e-6);
          }
        }
      }
    });
  }
}

TEST_CASE("disa: gradients of parameters and input match finite differences", "[disa][grad]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    DisaMixer mixer(f.params, "disa", disa_spec(8, 2, causal));
    f.ready(3);
    const std::int64_t B = 2, T = 5, d = 8;
    const std::vector<std::int32_t> lengths{5, 3};
    std::vector<float> x = test::random_vector(B * T * d, 21);
    const std::vector<float> w = zero_padded_rows(test::random_vector(B * T * d, 22), B, T, d, lengths);
    test::MixerLoss run(f, mixer, x, w, B, T, lengths.data());
    auto loss = [&] { return run.loss(); };
    std::vector<float> dx = run.backward();
    if (!causal) {  // backward accumulates into dx and the parameter gradients
      const std::vector<float> dx1 = dx, grads1(f.params.grads().begin(), f.params.grads().end());
      mixer.backward(f.ctx, run.saved(), w.data(), dx.data());
      for (std::size_t n = 0; n < dx.size(); ++n)
        REQUIRE(std::abs(dx[n] - 2.0f * dx1[n]) <= 1e-6f * (1 + std::abs(dx1[n])));
      for (std::size_t n = 0; n < grads1.size(); ++n)
        REQUIRE(std::abs(f.params.grads()[n] - 2.0f * grads1[n]) <= 1e-6f * (1 + std::abs(grads1[n])));
      for (std::size_t n = 0; n < dx.size(); ++n) dx[n] = dx1[n];
      std::copy(grads1.begin(), grads1.end(), f.params.grads().begin());
    }
    check_all_parameters(f.params, loss);
    check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 16}, 23);
  }
}

TEST_CASE("disa: rows with no allowed key give exactly the gated v, never NaN", "[disa]") {
  for (std::int64_t T : {1, 4}) {
    INFO("T " << T);
    Fixture f;
    DisaMixer mixer(f.params, "disa", disa_spec(8, 2, false));
    f.ready(9);
    const std::int64_t B = 1, d = 8, dh = 4;
    const std::vector<std::int32_t> lengths{static_cast<std::int32_t>(T)};
    const std::vector<float> x = test::random_vector(B * T * d, 31);
    std::vector<float> y(B * T * d);
    f.params.zero_grads();
    auto base = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    const auto& s = static_cast<const DisaMixer::Saved&>(*base);
    // Forward head 0 at the first token, backward head 1 at the last token.
    for (auto [h, i] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, T - 1}})
      for (std::int64_t c = 0; c < dh; ++c) {
        const std::int64_t at = i * d + h * dh + c;
        REQUIRE(s.o[at] == 0.0f);
        REQUIRE(s.u[at] == s.gate[at] * s.v[at]);
      }
    const Reference ref = reference(f, "disa", disa_spec(8, 2, false), x, B, T, lengths);
    require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-6, 2e-5);
    std::vector<float> dx(x.size(), 0.0f), dy = test::random_vector(B * T * d, 32);
    mixer.backward(f.ctx, *base, dy.data(), dx.data());
    REQUIRE(kernels::all_finite(y.data(), B * T * d));
    REQUIRE(kernels::all_finite(dx.data(), B * T * d));
    REQUIRE(kernels::all_finite(f.params.grads().data(), f.params.total_floats()));
  }
}

TEST_CASE("disa: compatibilities far into tanh's saturation stay exact, with finite gradients", "[disa]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    const MixerSpec spec = disa_spec(8, 2, causal);
    DisaMixer mixer(f.params, "disa", spec);
    f.ready(13);
    const std::int64_t B = 2, T = 6, d = 8;
    const std::vector<std::int32_t> lengths{6, 5};
    const std::vector<float> x = test::random_vector(B * T * d, 41);
    // Scale W1, W2 and b until the largest |a| is 200: tanh(a/5) is ±1 in float, f = ±5.
    const double a_max = reference(f, "disa", spec, x, B, T, lengths).a_max_abs;
    for (const char* p : {"disa.f1.weight", "disa.f2.weight", "disa.f.bias"}) {
      const ParamId id = f.params.find(p);
      for (std::int64_t i = 0; i < f.params.info(id).shape.numel(); ++i)
        f.params.value(id)[i] *= static_cast<float>(200.0 / a_max);
    }
    const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
    REQUIRE(ref.a_max_abs > 199.0);
    std::vector<float> y(B * T * d), dx(B * T * d, 0.0f);
    auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
    REQUIRE(kernels::all_finite(y.data(), B * T * d));
    require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-5, 1e-4);
    const std::vector<float> dy = zero_padded_rows(test::random_vector(B * T * d, 42), B, T, d, lengths);
    f.params.zero_grads();
    mixer.backward(f.ctx, *saved, dy.data(), dx.data());
    REQUIRE(kernels::all_finite(dx.data(), B * T * d));
    REQUIRE(kernels::all_finite(f.params.grads().data(), f.params.total_floats()));
  }
}

TEST_CASE("disa: impossible specs are rejected with a clear error", "[disa]") {
  ParamStore params;
  REQUIRE_THROWS_WITH(DisaMixer(params, "a", disa_spec(6, 3, false)),
                      Catch::Contains("--heads must be even for DiSA's forward and backward heads"));
  REQUIRE_THROWS_AS(DisaMixer(params, "b", disa_spec(8, 3, true)), attn::Error);
  REQUIRE_NOTHROW(DisaMixer(params, "c", disa_spec(6, 3, true)));  // causal: all heads forward
  DisaMixer ok(params, "d", disa_spec(8, 2, false));
  REQUIRE(ok.kind() == "disa");
  REQUIRE(ok.cache_width() == 16);
  Fixture f;
  DisaMixer encoder(f.params, "e", disa_spec(8, 2, false));
  f.ready();
  std::vector<float> x(8), y(8), cache(16);
  REQUIRE_THROWS_WITH(encoder.step(f.ctx, x.data(), y.data(), 1, 0, cache.data(), 1),
                      Catch::Contains("incremental decoding needs the causal variant"));
}

TEST_CASE("disa causal: the future never leaks and step() equals the full forward", "[disa]") {
  Fixture f;
  DisaMixer mixer(f.params, "dec", disa_spec(8, 2, true));
  f.ready(17);
  // Changing token t + 1 leaves rows ≤ t bitwise as they were.
  test::require_causal_and_steps(f, mixer, 0.0);
}

TEST_CASE("disa: a sequence alone equals itself in a padded batch", "[disa]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    DisaMixer mixer(f.params, "disa", disa_spec(8, 2, causal));
    f.ready(19);
    test::require_alone_equals_padded_with_gradients(f, mixer);
  }
}
