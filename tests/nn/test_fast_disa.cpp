// Fast-DiSA: the factorised feature-wise softmax against a direct T×T×d_h
// computation in double, finite-difference gradients, empty rows, large
// logits, causality and incremental decoding, padding.
#include "grad_check.h"
#include "mixer_checks.h"

#include <cstring>
#include <memory>

#include "attn/core/arena.h"
#include "attn/core/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::require_valid_rows_close;
using attn::test::zero_padded_rows;
using attn::test::weighted_sum;

namespace {

using Fixture = attn::test::LayerFixture;

MixerSpec disa_spec(std::int64_t d, std::int64_t heads, bool causal, bool gate, const std::string& t2t) {
  return test::mixer_spec("fastdisa", d, heads, causal, {{"disa_gate", gate}, {"disa_t2t", t2t}});
}

double log_sigmoid(double z) { return z >= 0 ? -std::log1p(std::exp(-z)) : z - std::log1p(std::exp(z)); }

// The whole mixer in double, with the feature-wise softmax computed directly
// from the [L, L, d_h] tensor of compatibilities f_ijk = log φ(R_ij) + S_jk.
struct Reference {
  std::vector<double> y, o, gate;       // [B·T, d]; only valid rows are filled
  std::vector<double> maps;             // [B, H, T, T]: P_ijk averaged over k
  double r_max_abs = 0, s_max_abs = 0;  // the largest |R_ij| and |S_jk| over valid positions
};

// x: float, or double for finite differences of the reference itself.
template <class Real>
Reference reference(const Fixture& f, const std::string& name, const MixerSpec& spec, const std::vector<Real>& x,
                    std::int64_t B, std::int64_t T, const std::vector<std::int32_t>& lengths) {
  const std::int64_t d = spec.d, H = spec.heads, dh = d / H;
  const float* wq = f.value(name + ".q.weight");
  const float* wk = f.value(name + ".k.weight");
  const float* wv = f.value(name + ".v.weight");
  const float* bq = f.value(name + ".q.bias");
  const float* bk = f.value(name + ".k.bias");
  const float* bv = f.value(name + ".v.bias");
  const float* wo = f.value(name + ".o.weight");
  const float* bo = f.value(name + ".o.bias");
  const float* w1 = f.value(name + ".s1.weight");
  const float* b1 = f.value(name + ".s1.bias");
  const float* w2 = f.value(name + ".s2.weight");
  const float* b2 = f.value(name + ".s2.bias");
  const float* wg = spec.options.at("disa_gate").get<bool>() ? f.value(name + ".gate.weight") : nullptr;
  const float* bg = spec.options.at("disa_gate").get<bool>() ? f.value(name + ".gate.bias") : nullptr;
  Reference ref;
  ref.y.assign(B * T * d, 0.0);
  ref.o.assign(B * T * d, 0.0);
  ref.gate.assign(B * T * d, 0.0);
  ref.maps.assign(B * H * T * T, 0.0);
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t L = lengths[b];
    std::vector<double> q(L * d), k(L * d), v(L * d), u(L * d);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t c = 0; c < d; ++c) {
        double sq = bq[c], sk = bk[c], sv = bv[c];
        for (std::int64_t m = 0; m < d; ++m) {
          const double xm = x[(b * T + i) * d + m];
          sq += wq[c * d + m] * xm;
          sk += wk[c * d + m] * xm;
          sv += wv[c * d + m] * xm;
        }
        q[i * d + c] = sq;
        k[i * d + c] = sk;
        v[i * d + c] = sv;
      }
    for (std::int64_t h = 0; h < H; ++h) {
      auto vh = [&](std::int64_t j, std::int64_t c) { return v[j * d + h * dh + c]; };
      std::vector<double> hidden(L * dh), S(L * dh), R(L * L);
      for (std::int64_t j = 0; j < L; ++j)
        for (std::int64_t o = 0; o < dh; ++o) {
          double z = b1[h * dh + o];
          for (std::int64_t c = 0; c < dh; ++c) z += w1[(h * dh + o) * dh + c] * vh(j, c);
          hidden[j * dh + o] = z > 0 ? z : std::expm1(z);
        }
      for (std::int64_t j = 0; j < L; ++j)
        for (std::int64_t o = 0; o < dh; ++o) {
          double z = b2[h * dh + o];
          for (std::int64_t c = 0; c < dh; ++c) z += w2[(h * dh + o) * dh + c] * hidden[j * dh + c];
          S[j * dh + o] = z;
          ref.s_max_abs = std::max(ref.s_max_abs, std::abs(z));
        }
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (std::int64_t c = 0; c < dh; ++c) dot += q[i * d + h * dh + c] * k[j * d + h * dh + c];
          R[i * L + j] = dot / std::sqrt(static_cast<double>(dh));
          ref.r_max_abs = std::max(ref.r_max_abs, std::abs(R[i * L + j]));
        }
      // The direct form: P_ijk = softmax_j(f_ijk) over the allowed keys, a [L, L, d_h] tensor.
      std::vector<double> P(L * L * dh, 0.0);
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t c = 0; c < dh; ++c) {
          double fmax = -INFINITY;
          for (std::int64_t j = 0; j < L; ++j)
            if (test::directional_allowed(spec, h, i, j)) {
              const double t2t = spec.options.at("disa_t2t") == "exp" ? R[i * L + j] : log_sigmoid(R[i * L + j]);
              fmax = std::max(fmax, t2t + S[j * dh + c]);
            }
          if (fmax == -INFINITY) continue;  // no key: P = 0, O = 0
          double den = 0;
          for (std::int64_t j = 0; j < L; ++j)
            if (test::directional_allowed(spec, h, i, j)) {
              const double t2t = spec.options.at("disa_t2t") == "exp" ? R[i * L + j] : log_sigmoid(R[i * L + j]);
              P[(i * L + j) * dh + c] = std::exp(t2t + S[j * dh + c] - fmax);
              den += P[(i * L + j) * dh + c];
            }
          for (std::int64_t j = 0; j < L; ++j) P[(i * L + j) * dh + c] /= den;
        }
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> o(dh, 0.0);
        for (std::int64_t c = 0; c < dh; ++c)
          for (std::int64_t j = 0; j < L; ++j) o[c] += P[(i * L + j) * dh + c] * vh(j, c);
        for (std::int64_t j = 0; j < L; ++j) {
          double mean = 0;
          for (std::int64_t c = 0; c < dh; ++c) mean += P[(i * L + j) * dh + c];
          ref.maps[((b * H + h) * T + i) * T + j] = mean / dh;
        }
        for (std::int64_t c = 0; c < dh; ++c) {
          double g = 0;
          if (wg) {
            double z = bg[h * dh + c];
            for (std::int64_t m = 0; m < dh; ++m)
              z += wg[(h * dh + c) * 2 * dh + m] * vh(i, m) + wg[(h * dh + c) * 2 * dh + dh + m] * o[m];
            g = 1.0 / (1.0 + std::exp(-z));
          }
          ref.o[(b * T + i) * d + h * dh + c] = o[c];
          ref.gate[(b * T + i) * d + h * dh + c] = g;
          u[i * d + h * dh + c] = g * vh(i, c) + (1 - g) * o[c];
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

// Multiplies the named parameters by factor (S is linear in W_s2, b_s2; R quadratic in q's and k's).
void scale_params(Fixture& f, std::initializer_list<const char*> names, double factor) {
  for (const char* p : names) {
    const ParamId id = f.params.find(p);
    for (std::int64_t i = 0; i < f.params.info(id).shape.numel(); ++i)
      f.params.value(id)[i] *= static_cast<float>(factor);
  }
}

}  // namespace

TEST_CASE("fast-disa: the factorised form equals the direct T×T×d_h feature-wise softmax, with gradients", "[disa]") {
  const std::int64_t lq = 6, lk = 6, dh = 4;
  // A with a forward strict mask and one excluded key: row 0 has no key at all.
  std::vector<float> a = test::random_vector(lq * lk, 1, 0.05f, 1.0f), e = test::random_vector(lk * dh, 2, 0.05f, 1.0f);
  std::vector<float> v = test::random_vector(lk * dh, 3), w = test::random_vector(lq * dh, 4);
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t j = 0; j < lk; ++j)
      if (j >= i || j == 2) a[i * lk + j] = 0.0f;
  for (std::int64_t c = 0; c < dh; ++c) e[4 * dh + c] = 0.0f;  // a padded key: E = 0

  // Direct form in double: P_ijk = A_ij E_jk / Σ_j A_ij E_jk, O_ik = Σ_j P_ijk v_jk.
  auto direct = [&](const std::vector<double>& A, const std::vector<double>& E, const std::vector<double>& V) {
    std::vector<double> P(lq * lk * dh, 0.0), O(lq * dh, 0.0);
    for (std::int64_t i = 0; i < lq; ++i)
      for (std::int64_t c = 0; c < dh; ++c) {
        double den = 0;
        for (std::int64_t j = 0; j < lk; ++j) den += A[i * lk + j] * E[j * dh + c];
        if (den == 0) continue;
        for (std::int64_t j = 0; j < lk; ++j) P[(i * lk + j) * dh + c] = A[i * lk + j] * E[j * dh + c] / den;
        for (std::int64_t j = 0; j < lk; ++j) O[i * dh + c] += P[(i * lk + j) * dh + c] * V[j * dh + c];
      }
    return O;
  };
  std::vector<double> A(a.begin(), a.end()), E(e.begin(), e.end()), V(v.begin(), v.end());
  const std::vector<double> want = direct(A, E, V);

  std::vector<float> o(lq * dh, -7.0f), inv_d(lq * dh, -7.0f);
  std::vector<float> sc;
  fast_disa_attend(lq, lk, dh, a.data(), lk, e.data(), dh, v.data(), dh, o.data(), dh, inv_d.data(), dh, sc, nullptr,
                   kernels::ComputeType::fp32);
  test::require_close(o, want, 1e-6, 1e-5);
  for (std::int64_t c = 0; c < dh; ++c) {  // row 0: no key → exactly 0
    REQUIRE(o[c] == 0.0f);
    REQUIRE(inv_d[c] == 0.0f);
  }

  // Backward accumulates: start the gradients at 1 and subtract it afterwards.
  std::vector<float> da(lq * lk, 1.0f), de(lk * dh, 1.0f), dv(lk * dh, 1.0f);
  fast_disa_attend_backward(lq, lk, dh, a.data(), lk, e.data(), dh, v.data(), dh, o.data(), dh, inv_d.data(), dh,
                            w.data(), dh, da.data(), lk, de.data(), dh, dv.data(), dh, sc, nullptr,
                            kernels::ComputeType::fp32);
  for (float& g : da) g -= 1.0f;
  for (float& g : de) g -= 1.0f;
  for (float& g : dv) g -= 1.0f;
  // Central differences of Σ w ⊙ O_direct in double; rows without keys have gradient 0 by definition.
  auto loss = [&] {
    const std::vector<double> O = direct(A, E, V);
    double s = 0;
    for (std::size_t i = 0; i < O.size(); ++i) s += w[i] * O[i];
    return s;
  };
  std::vector<double> want_da(lq * lk, 0.0), want_de(lk * dh), want_dv(lk * dh);
  for (std::int64_t i = 1; i < lq; ++i)
    for (std::int64_t j = 0; j < lk; ++j) want_da[i * lk + j] = test::central_difference(loss, A[i * lk + j], 1e-6);
  for (std::int64_t n = 0; n < lk * dh; ++n) {
    want_de[n] = test::central_difference(loss, E[n], 1e-6);
    want_dv[n] = test::central_difference(loss, V[n], 1e-6);
  }
  test::require_close(da, want_da, 1e-5, 1e-4);
  test::require_close(de, want_de, 1e-5, 1e-4);
  test::require_close(dv, want_dv, 1e-5, 1e-4);
}

TEST_CASE("fast-disa: the mixer equals the direct double reference (encoder and causal, gate, exp and sigmoid)",
          "[disa]") {
  struct Case {
    std::int64_t d, heads;
    bool causal, gate;
    const char* t2t;
  };
  const Case cases[] = {{8, 2, false, true, "exp"},   {8, 2, false, false, "sigmoid"}, {12, 4, false, true, "sigmoid"},
                        {12, 4, false, false, "exp"}, {8, 2, true, true, "exp"},       {9, 3, true, false, "sigmoid"}};
  for (const Case& cs : cases) {
    INFO("d " << cs.d << " heads " << cs.heads << " causal " << cs.causal << " gate " << cs.gate << " t2t " << cs.t2t);
    Fixture f;
    const MixerSpec spec = disa_spec(cs.d, cs.heads, cs.causal, cs.gate, cs.t2t);
    FastDisaMixer mixer(f.params, "disa", spec);
    f.ready(7);
    const std::int64_t B = 2, T = 6, d = cs.d, H = cs.heads;
    const std::vector<std::int32_t> lengths{6, 4};
    const std::vector<float> x = test::random_vector(B * T * d, 11);
    const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
    test::for_each_isa_and_threads([&](Isa, int) {
      f.arena.reset();
      std::vector<float> y(B * T * d), y2(B * T * d);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-6, 2e-5);
      REQUIRE(kernels::all_finite(y.data(), B * T * d));
      mixer.forward(f.ctx, x.data(), y2.data(), B, T, lengths.data());
      REQUIRE(std::memcmp(y.data(), y2.data(), sizeof(float) * y.size()) == 0);  // same threads: bitwise
      // Maps: the feature-mean of P, rows summing to 1 (or all 0 with no key).
      for (std::int64_t b = 0; b < B; ++b) {
        const MixerMaps maps = mixer.export_maps(*saved, b);
        const std::int64_t L = lengths[b];
        test::require_map_shape(maps, H, L);
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t i = 0; i < L; ++i) {
            double row = 0;
            bool any = false;
            for (std::int64_t j = 0; j < L; ++j) {
              const float got = maps.weights[(h * L + i) * L + j];
              REQUIRE(std::abs(got - ref.maps[((b * H + h) * T + i) * T + j]) <= 1e-5);
              if (!test::directional_allowed(spec, h, i, j)) REQUIRE(got == 0.0f);
              any |= test::directional_allowed(spec, h, i, j);
              row += got;
            }
            REQUIRE(std::abs(row - (any ? 1.0 : 0.0)) <= 1e-5);
            REQUIRE(maps.extras["directions"][h] == (cs.causal || h < H / 2 ? "forward" : "backward"));
            if (cs.gate) {
              double mean = 0;
              for (std::int64_t c = 0; c < d / H; ++c) mean += ref.gate[(b * T + i) * d + h * (d / H) + c];
              REQUIRE(std::abs(maps.extras["fusion_gate"][h][i].get<double>() - mean / (d / H)) <= 1e-5);
            } else {
              REQUIRE(maps.extras["fusion_gate"].is_null());
            }
          }
        REQUIRE(maps.extras["averaged_over_features"] == true);
      }
    });
  }
}

TEST_CASE("fast-disa: gradients of parameters and input match finite differences", "[disa][grad]") {
  for (bool causal : {false, true})
    for (bool gate : {true, false})
      for (const char* t2t : {"exp", "sigmoid"}) {
        INFO("causal " << causal << " gate " << gate << " t2t " << t2t);
        Fixture f;
        const MixerSpec spec = disa_spec(8, 2, causal, gate, t2t);
        FastDisaMixer mixer(f.params, "disa", spec);
        f.ready(3);
        const std::int64_t B = 2, T = 5, d = 8;
        const std::vector<std::int32_t> lengths{5, 3};
        std::vector<float> x = test::random_vector(B * T * d, 21);
        const std::vector<float> w = zero_padded_rows(test::random_vector(B * T * d, 22), B, T, d, lengths);
        test::MixerLoss run(f, mixer, x, w, B, T, lengths.data());
        auto loss = [&] { return run.loss(); };
        std::vector<float> dx = run.backward();
        if (!causal && gate) {  // backward accumulates into dx and the parameter gradients
          const std::vector<float> dx1 = dx, grads1(f.params.grads().begin(), f.params.grads().end());
          mixer.backward(f.ctx, run.saved(), w.data(), dx.data());
          // (to rounding: a product added onto a gradient sums in another order than onto 0)
          for (std::size_t n = 0; n < dx.size(); ++n)
            REQUIRE(std::abs(dx[n] - 2.0f * dx1[n]) <= 1e-6f * (1 + std::abs(dx1[n])));
          for (std::size_t n = 0; n < grads1.size(); ++n)
            REQUIRE(std::abs(f.params.grads()[n] - 2.0f * grads1[n]) <= 1e-6f * (1 + std::abs(grads1[n])));
          for (std::size_t n = 0; n < dx.size(); ++n) dx[n] = dx1[n];
          std::copy(grads1.begin(), grads1.end(), f.params.grads().begin());
        }
        check_all_parameters(f.params, loss);
        check_gradient("x", x.data(), dx.data(), static_cast<std::int64_t>(x.size()), loss, {.samples_per_tensor = 16},
                       23);
      }
}

TEST_CASE("fast-disa: rows with no allowed key give exactly the gated v, never NaN", "[disa]") {
  for (std::int64_t T : {1, 4})
    for (bool gate : {true, false}) {
      INFO("T " << T << " gate " << gate);
      Fixture f;
      const MixerSpec spec = disa_spec(8, 2, false, gate, "exp");
      FastDisaMixer mixer(f.params, "disa", spec);
      f.ready(9);
      const std::int64_t B = 1, d = 8, dh = 4;
      const std::vector<std::int32_t> lengths{static_cast<std::int32_t>(T)};
      const std::vector<float> x = test::random_vector(B * T * d, 31);
      std::vector<float> y(B * T * d);
      f.params.zero_grads();
      auto base = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      const auto& s = static_cast<const FastDisaMixer::Saved&>(*base);
      // Forward head 0 at the first token, backward head 1 at the last token.
      for (auto [h, i] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, T - 1}})
        for (std::int64_t c = 0; c < dh; ++c) {
          const std::int64_t at = i * d + h * dh + c;
          REQUIRE(s.o[at] == 0.0f);
          const float g = gate ? s.gate[at] : 0.0f;
          REQUIRE(s.u[at] == g * s.qkv[i * 3 * d + 2 * d + h * dh + c]);
        }
      const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-6, 2e-5);
      std::vector<float> dx(x.size(), 0.0f), dy = test::random_vector(B * T * d, 32);
      mixer.backward(f.ctx, *base, dy.data(), dx.data());
      REQUIRE(kernels::all_finite(y.data(), B * T * d));
      REQUIRE(kernels::all_finite(dx.data(), B * T * d));
      REQUIRE(kernels::all_finite(f.params.grads().data(), f.params.total_floats()));
    }
}

TEST_CASE("fast-disa: logits of ±80 neither overflow nor lose accuracy", "[disa]") {
  for (bool causal : {false, true})
    for (const char* t2t : {"exp", "sigmoid"}) {
      INFO("causal " << causal << " t2t " << t2t);
      Fixture f;
      const MixerSpec spec = disa_spec(8, 2, causal, true, t2t);
      FastDisaMixer mixer(f.params, "disa", spec);
      f.ready(13);
      const std::int64_t B = 2, T = 6, d = 8;
      const std::vector<std::int32_t> lengths{6, 5};
      const std::vector<float> x = test::random_vector(B * T * d, 41);
      // Scale q and k until the largest |R| is 80.
      const double r_max = reference(f, "disa", spec, x, B, T, lengths).r_max_abs;
      scale_params(f, {"disa.q.weight", "disa.k.weight", "disa.q.bias", "disa.k.bias"}, std::sqrt(80.0 / r_max));
      const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
      std::vector<float> y(B * T * d);
      f.arena.reset();
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      REQUIRE(kernels::all_finite(y.data(), B * T * d));
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-5, 1e-4);
      std::vector<float> dx(x.size(), 0.0f);
      const std::vector<float> dy = zero_padded_rows(test::random_vector(B * T * d, 42), B, T, d, lengths);
      f.params.zero_grads();
      mixer.backward(f.ctx, *saved, dy.data(), dx.data());
      REQUIRE(kernels::all_finite(dx.data(), B * T * d));
      REQUIRE(kernels::all_finite(f.params.grads().data(), f.params.total_floats()));
    }
}

TEST_CASE("fast-disa: impossible specs are rejected with a clear error", "[disa]") {
  ParamStore params;
  REQUIRE_THROWS_WITH(FastDisaMixer(params, "a", disa_spec(6, 3, false, true, "exp")),
                      Catch::Contains("--heads must be even for Fast-DiSA's forward and backward heads"));
  REQUIRE_THROWS_AS(FastDisaMixer(params, "b", disa_spec(6, 3, false, true, "exp")), attn::Error);
  REQUIRE_THROWS_AS(FastDisaMixer(params, "c", disa_spec(8, 3, true, true, "exp")), attn::Error);
  REQUIRE_THROWS_AS(FastDisaMixer(params, "d", disa_spec(8, 2, false, true, "tanh")), attn::Error);
  REQUIRE_NOTHROW(FastDisaMixer(params, "e", disa_spec(6, 3, true, true, "exp")));  // causal: all heads forward
  FastDisaMixer ok(params, "f", disa_spec(8, 2, false, true, "exp"));
  REQUIRE(ok.kind() == "fastdisa");
  REQUIRE(ok.cache_width() == 24);
}

TEST_CASE("fast-disa causal: the future never leaks and step() equals the full forward", "[disa]") {
  for (bool gate : {true, false})
    for (const char* t2t : {"exp", "sigmoid"}) {
      INFO("gate " << gate << " t2t " << t2t);
      Fixture f;
      FastDisaMixer mixer(f.params, "dec", disa_spec(8, 2, true, gate, t2t));
      f.ready(17);
      // Changing token t + 1 leaves rows ≤ t up to the rounding of the per-feature
      // shift of S, which spans the whole sequence.
      test::require_causal_and_steps(f, mixer, 1e-6);
    }
}

TEST_CASE("fast-disa: a sequence alone equals itself in a padded batch", "[disa]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Fixture f;
    FastDisaMixer mixer(f.params, "disa", disa_spec(8, 2, causal, true, "sigmoid"));
    f.ready(19);
    test::require_alone_equals_padded_with_gradients(f, mixer);
  }
}

TEST_CASE("fast-disa: rows whose logits are all near −100 (σ underflows in float) stay exact", "[disa]") {
  for (bool causal : {false, true})
    for (const char* t2t : {"exp", "sigmoid"}) {
      INFO("causal " << causal << " t2t " << t2t);
      Fixture f;
      const MixerSpec spec = disa_spec(8, 2, causal, true, t2t);
      FastDisaMixer mixer(f.params, "disa", spec);
      f.ready(23);
      // q ≈ +c and k ≈ −c on every feature: R ≈ −c² d_h / √d_h = −100 for every pair.
      const float c = std::sqrt(100.0f / 2.0f);
      for (const char* p : {"disa.q.bias", "disa.k.bias"}) {
        const ParamId id = f.params.find(p);
        for (std::int64_t i = 0; i < 8; ++i) f.params.value(id)[i] = p[5] == 'q' ? c : -c;
      }
      const std::int64_t B = 2, T = 5, d = 8;
      const std::vector<std::int32_t> lengths{5, 4};
      const std::vector<float> x = test::random_vector(B * T * d, 71, -0.3f, 0.3f);
      const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
      std::vector<float> y(B * T * d), dx(B * T * d, 0.0f);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      REQUIRE(kernels::all_finite(y.data(), B * T * d));
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-5, 1e-4);
      const std::vector<float> dy = zero_padded_rows(test::random_vector(B * T * d, 72), B, T, d, lengths);
      f.params.zero_grads();
      mixer.backward(f.ctx, *saved, dy.data(), dx.data());
      REQUIRE(kernels::all_finite(dx.data(), B * T * d));
      REQUIRE(kernels::all_finite(f.params.grads().data(), f.params.total_floats()));
    }
}

// S spread over ±80 per feature: the factorised form's one shift per feature
// (the max over all valid keys) leaves e^(S − shift) = 0 in float at every key
// some queries may see, so those (query, feature) pairs must be computed
// directly. Outputs, maps, step() and the input gradient (central differences
// of the double reference) stay exact.
TEST_CASE("fast-disa: a source2token spread of ±80 that underflows the shared shift stays exact, with gradients",
          "[disa][grad]") {
  for (bool causal : {false, true})
    for (const char* t2t : {"exp", "sigmoid"}) {
      INFO("causal " << causal << " t2t " << t2t);
      Fixture f;
      const MixerSpec spec = disa_spec(8, 2, causal, true, t2t);
      FastDisaMixer mixer(f.params, "disa", spec);
      f.ready(29);
      const std::int64_t B = 2, T = 6, d = 8;
      const std::vector<std::int32_t> lengths{6, 5};
      const std::vector<float> x = test::random_vector(B * T * d, 81);
      const Reference before = reference(f, "disa", spec, x, B, T, lengths);
      scale_params(f, {"disa.s2.weight", "disa.s2.bias"}, 80.0 / before.s_max_abs);
      scale_params(f, {"disa.q.weight", "disa.q.bias", "disa.k.weight", "disa.k.bias"},
                   std::sqrt(45.0 / before.r_max_abs));
      const Reference ref = reference(f, "disa", spec, x, B, T, lengths);
      REQUIRE(ref.s_max_abs > 79.0);

      std::vector<float> y(B * T * d), dx(B * T * d, 0.0f);
      auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
      require_valid_rows_close(y.data(), ref.y, B, T, d, lengths, 2e-5, 1e-4);
      for (std::int64_t b = 0; b < B; ++b) {
        const MixerMaps maps = mixer.export_maps(*saved, b);
        for (std::size_t n = 0; n < maps.weights.size(); ++n) {
          const std::int64_t L = lengths[b], h = n / (L * L), i = n / L % L, j = n % L;
          REQUIRE(std::abs(maps.weights[n] - ref.maps[((b * 2 + h) * T + i) * T + j]) <= 1e-5);
        }
      }
      if (causal) {
        std::vector<float> cache(B * T * mixer.cache_width()), xt(B * d), yt(B * d);
        for (std::int64_t t = 0; t < lengths[1]; ++t) {
          for (std::int64_t n = 0; n < B; ++n) std::memcpy(&xt[n * d], &x[(n * T + t) * d], sizeof(float) * d);
          mixer.step(f.ctx, xt.data(), yt.data(), B, t, cache.data(), T);
          for (std::int64_t n = 0; n < B; ++n)
            for (std::int64_t c = 0; c < d; ++c) {
              const double want = ref.y[(n * T + t) * d + c];
              REQUIRE(std::abs(yt[n * d + c] - want) <= 2e-5 + 1e-4 * std::abs(want));
            }
        }
      }

      const std::vector<float> dy = zero_padded_rows(test::random_vector(B * T * d, 82), B, T, d, lengths);
      f.params.zero_grads();
      mixer.backward(f.ctx, *saved, dy.data(), dx.data());
      auto loss = [&](const std::vector<double>& xd) {
        const Reference r = reference(f, "disa", spec, xd, B, T, lengths);
        double sum = 0;
        for (std::size_t n = 0; n < dy.size(); ++n) sum += dy[n] * r.y[n];
        return sum;
      };
      std::vector<double> xd(x.begin(), x.end());
      const double step = 1e-6;
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t n = b * T * d; n < (b * T + lengths[b]) * d; ++n) {
          const double x0 = xd[n];
          xd[n] = x0 + step;
          const double up = loss(xd);
          xd[n] = x0 - step;
          const double down = loss(xd);
          xd[n] = x0;
          const double want = (up - down) / (2 * step);
          INFO("dx[" << n << "]: got " << dx[n] << ", want " << want);
          REQUIRE(std::abs(dx[n] - want) <= 1e-3 * (1.0 + std::abs(want)));
        }
    }
}
