// Checks every token mixer's tests make of it, whatever its mechanism: valid
// rows against a reference, a sentence alone against the same sentence in a
// padded batch, causality, and step() against the full causal forward. Each
// takes a mixer built on a fixture made ready by the caller.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "attn/kernels/elementwise.h"
#include "attn/nn/token_mixer.h"
#include "grad_check.h"

namespace attn::test {

// Valid rows of got against want: |got − want| ≤ atol + rtol·|want|.
inline void require_valid_rows_close(const float* got, const std::vector<double>& want, std::int64_t B, std::int64_t T,
                                     std::int64_t d, const std::vector<std::int32_t>& lengths, double atol,
                                     double rtol) {
  double worst = 0;
  std::int64_t worst_at = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < lengths[b]; ++i)
      for (std::int64_t c = 0; c < d; ++c) {
        const std::int64_t at = (b * T + i) * d + c;
        const double err = std::abs(got[at] - want[at]) / (atol + rtol * std::abs(want[at]));
        if (!(err <= worst)) {
          worst = err;
          worst_at = at;
        }
      }
  INFO("worst at " << worst_at << ": got " << got[worst_at] << ", want " << want[worst_at]);
  REQUIRE(worst <= 1.0);
}

// w [B·T, d] with the rows past each sequence's length set to 0.
inline std::vector<float> zero_padded_rows(std::vector<float> w, std::int64_t B, std::int64_t T, std::int64_t d,
                                           const std::vector<std::int32_t>& lengths) {
  for (std::int64_t b = 0; b < B; ++b)
    std::fill(w.begin() + (b * T + lengths[b]) * d, w.begin() + (b + 1) * T * d, 0.0f);
  return w;
}

// Whether query i of head h may see key j under DiSA's and Fast-DiSA's masks
// (nn/mechanisms/directional/directions.h), written out again for the references.
inline bool directional_allowed(const nn::MixerSpec& spec, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (spec.causal) return j <= i;
  return h < spec.heads / 2 ? j < i : j > i;
}

inline void require_map_shape(const nn::MixerMaps& maps, std::int64_t heads, std::int64_t length) {
  REQUIRE(maps.heads == heads);
  REQUIRE(maps.length == length);
  REQUIRE(maps.weights.size() == static_cast<std::size_t>(heads * length * length));
}

// Forward only: a sentence of L tokens alone gives the outputs it gives as the
// second of a batch of 2 padded to T with large junk (d features).
inline void require_alone_equals_padded(LayerFixture& f, const nn::TokenMixer& mixer, std::int64_t d, std::int64_t L,
                                        std::int64_t T) {
  std::vector<float> alone = random_vector(L * d, 72), y_alone(L * d);
  const std::vector<std::int32_t> len_alone{static_cast<std::int32_t>(L)};
  mixer.forward(f.ctx, alone.data(), y_alone.data(), 1, L, len_alone.data());
  // Batch: the short sentence second, right-padded with large junk; a longer one first.
  std::vector<float> batch = random_vector(2 * T * d, 73, -30.0f, 30.0f), y_batch(2 * T * d);
  std::copy(alone.begin(), alone.end(), batch.begin() + T * d);
  const std::vector<std::int32_t> len_batch{static_cast<std::int32_t>(T), static_cast<std::int32_t>(L)};
  f.arena.reset();
  mixer.forward(f.ctx, batch.data(), y_batch.data(), 2, T, len_batch.data());
  for (std::int64_t i = 0; i < L * d; ++i)
    REQUIRE(std::abs(y_batch[T * d + i] - y_alone[i]) <= 1e-5f * (1.0f + std::abs(y_alone[i])));
}

// Forward and backward: a sentence of 4 tokens alone (d = 8) gives the outputs,
// input gradients and parameter gradients it gives as the second of a batch of
// 3 padded to 7; its padding gets no gradient.
inline void require_alone_equals_padded_with_gradients(LayerFixture& f, const nn::TokenMixer& mixer) {
  const std::int64_t d = 8, L = 4, B = 3, T = 7;
  const std::vector<float> alone = random_vector(L * d, 61);
  std::vector<float> batch = random_vector(B * T * d, 62);
  const std::vector<std::int32_t> lengths{7, static_cast<std::int32_t>(L), 2}, one{static_cast<std::int32_t>(L)};
  std::copy(alone.begin(), alone.end(), batch.begin() + T * d);
  for (std::int64_t i = L; i < T; ++i)  // padding holds large, but finite, junk
    for (std::int64_t c = 0; c < d; ++c) batch[(T + i) * d + c] = 50.0f;
  const std::vector<float> dy_alone = random_vector(L * d, 63);
  std::vector<float> dy_batch(B * T * d, 0.0f);
  std::copy(dy_alone.begin(), dy_alone.end(), dy_batch.begin() + T * d);

  std::vector<float> y1(L * d), dx1(L * d, 0.0f), y2(B * T * d), dx2(B * T * d, 0.0f);
  f.params.zero_grads();
  auto s1 = mixer.forward(f.ctx, alone.data(), y1.data(), 1, L, one.data());
  mixer.backward(f.ctx, *s1, dy_alone.data(), dx1.data());
  const std::vector<float> grads1(f.params.grads().begin(), f.params.grads().end());
  f.arena.reset();
  f.params.zero_grads();
  auto s2 = mixer.forward(f.ctx, batch.data(), y2.data(), B, T, lengths.data());
  mixer.backward(f.ctx, *s2, dy_batch.data(), dx2.data());
  for (std::int64_t n = 0; n < L * d; ++n) {
    REQUIRE(std::abs(y1[n] - y2[T * d + n]) <= 1e-6);
    REQUIRE(std::abs(dx1[n] - dx2[T * d + n]) <= 1e-6);
  }
  for (std::int64_t n = L * d; n < T * d; ++n) REQUIRE(dx2[T * d + n] == 0.0f);  // padding gets no gradient
  REQUIRE(kernels::all_finite(y2.data(), B * T * d));
  const auto grads2 = f.params.grads();
  for (std::size_t n = 0; n < grads1.size(); ++n)
    REQUIRE(std::abs(grads1[n] - grads2[n]) <= 1e-5 * (1.0 + std::abs(grads1[n])));
}

// A causal mixer over one sequence of T tokens (d features): changing token
// t + 1 by 1.5 leaves the outputs of tokens ≤ t bitwise as they were and
// changes token t + 1's.
inline void require_causal(LayerFixture& f, const nn::TokenMixer& mixer, std::int64_t d, std::int64_t T) {
  const std::vector<std::int32_t> lengths{static_cast<std::int32_t>(T)};
  std::vector<float> x = random_vector(T * d, 52), y1(T * d), y2(T * d);
  mixer.forward(f.ctx, x.data(), y1.data(), 1, T, lengths.data());
  for (std::int64_t t = 0; t + 1 < T; ++t) {
    std::vector<float> x2 = x;
    for (std::int64_t j = 0; j < d; ++j) x2[(t + 1) * d + j] += 1.5f;
    f.arena.reset();
    mixer.forward(f.ctx, x2.data(), y2.data(), 1, T, lengths.data());
    for (std::int64_t i = 0; i < (t + 1) * d; ++i) REQUIRE(y1[i] == y2[i]);
    bool changed = false;
    for (std::int64_t i = (t + 1) * d; i < (t + 2) * d; ++i) changed |= y1[i] != y2[i];
    REQUIRE(changed);
  }
}

// step() over n hypotheses of T tokens (d features) equals the full causal
// forward at every position, |step − forward| ≤ 1e-5·(1 + |forward|). The
// cache starts filled with `fill`; before_step(t, cache), when given, may
// spoil entries step t must not read.
inline void require_steps_equal_forward(
    LayerFixture& f, const nn::TokenMixer& mixer, std::int64_t n, std::int64_t T, std::int64_t d, float fill,
    const std::function<void(std::int64_t t, std::vector<float>& cache)>& before_step = {}) {
  const std::vector<std::int32_t> lengths(n, static_cast<std::int32_t>(T));
  std::vector<float> x = random_vector(n * T * d, 62 + T), y(n * T * d);
  mixer.forward(f.ctx, x.data(), y.data(), n, T, lengths.data());
  std::vector<float> cache(n * T * mixer.cache_width(), fill), xs(n * d), ys(n * d);
  for (std::int64_t t = 0; t < T; ++t) {
    if (before_step) before_step(t, cache);
    f.arena.reset();
    for (std::int64_t i = 0; i < n; ++i) std::copy_n(x.begin() + (i * T + t) * d, d, xs.begin() + i * d);
    mixer.step(f.ctx, xs.data(), ys.data(), n, t, cache.data(), T);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < d; ++j) {
        INFO("t " << t << " hyp " << i << " feature " << j);
        const float want = y[(i * T + t) * d + j];
        REQUIRE(std::abs(ys[i * d + j] - want) <= 1e-5f * (1.0f + std::abs(want)));
      }
  }
}

// A causal mixer over 2 sequences of 7 tokens (d = 8): changing token t + 1
// by 3 leaves the outputs of tokens ≤ t within leak_tolerance (0: bitwise) and
// changes token t + 1's; step() equals the full forward within 1e-5, its cache
// starting as NaN.
inline void require_causal_and_steps(LayerFixture& f, const nn::TokenMixer& mixer, double leak_tolerance) {
  const std::int64_t N = 2, T = 7, d = 8;
  const std::vector<std::int32_t> lengths{7, 7};
  std::vector<float> x = random_vector(N * T * d, 51), y(N * T * d), y2(N * T * d);
  mixer.forward(f.ctx, x.data(), y.data(), N, T, lengths.data());
  for (std::int64_t t = 0; t + 1 < T; ++t) {
    std::vector<float> x2 = x;
    for (std::int64_t c = 0; c < d; ++c) x2[(t + 1) * d + c] += 3.0f;
    f.arena.reset();
    mixer.forward(f.ctx, x2.data(), y2.data(), N, T, lengths.data());
    for (std::int64_t i = 0; i <= t; ++i)
      for (std::int64_t c = 0; c < d; ++c) REQUIRE(std::abs(y2[i * d + c] - y[i * d + c]) <= leak_tolerance);
    double change = 0;
    for (std::int64_t c = 0; c < d; ++c) change += std::abs(y2[(t + 1) * d + c] - y[(t + 1) * d + c]);
    REQUIRE(change > 1e-3);
  }
  // Incremental decoding, N hypotheses at once.
  std::vector<float> cache(N * T * mixer.cache_width(), NAN), xt(N * d), yt(N * d);
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t n = 0; n < N; ++n) std::memcpy(&xt[n * d], &x[(n * T + t) * d], sizeof(float) * d);
    f.arena.reset();
    mixer.step(f.ctx, xt.data(), yt.data(), N, t, cache.data(), T);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t c = 0; c < d; ++c) {
        INFO("t " << t << " n " << n << " c " << c);
        REQUIRE(std::abs(yt[n * d + c] - y[(n * T + t) * d + c]) <= 1e-5);
      }
  }
}

}  // namespace attn::test
