#include "attn/nn/mechanisms/lightconv/lightconv_mixer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "attn/core/error.h"
#include "attn/nn/mechanism.h"

namespace attn::nn {

namespace {

float sigmoid(float g) { return 1.0f / (1.0f + std::exp(-g)); }

// pre: [rows, 2d] = [A G] → u: [rows, d] = A ⊙ σ(G) (written).
void glu_forward(const float* pre, float* u, std::int64_t rows, std::int64_t d) {
#pragma omp parallel for schedule(static) if (rows * d > 16384)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* a = pre + r * 2 * d;  // [d]
    const float* g = a + d;            // [d]
    float* o = u + r * d;              // [d]
    for (std::int64_t c = 0; c < d; ++c) o[c] = a[c] * sigmoid(g[c]);
  }
}

// du: [rows, d] → dpre: [rows, 2d] (written): dA = du ⊙ σ(G), dG = du ⊙ A ⊙ σ(G)(1 − σ(G)).
void glu_backward(const float* pre, const float* du, float* dpre, std::int64_t rows, std::int64_t d) {
#pragma omp parallel for schedule(static) if (rows * d > 16384)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* a = pre + r * 2 * d;  // [d]
    const float* g = a + d;            // [d]
    const float* dy = du + r * d;      // [d]
    float* da = dpre + r * 2 * d;      // [d]
    float* dg = da + d;                // [d]
    for (std::int64_t c = 0; c < d; ++c) {
      const float s = sigmoid(g[c]);
      da[c] = dy[c] * s;
      dg[c] = dy[c] * a[c] * s * (1.0f - s);
    }
  }
}

}  // namespace

std::int64_t lightconv_kernel(const MixerSpec& spec) {
  const auto kernels = option_value<std::vector<std::int64_t>>(spec, spec.causal ? "lightconv_decoder_kernels"
                                                                                 : "lightconv_encoder_kernels");
  require(!kernels.empty(), "--lightconv-" + std::string(spec.causal ? "decoder" : "encoder") +
                                "-kernels is empty; give one kernel size per layer, e.g. 3,7,15");
  const auto last = static_cast<std::int64_t>(kernels.size()) - 1;
  return kernels[static_cast<std::size_t>(std::clamp<std::int64_t>(spec.layer, 0, last))];
}

LightConvMixer::LightConvMixer(ParamStore& params, const std::string& name, const MixerSpec& spec, TapSource taps)
    : d_(spec.d), heads_(spec.heads), causal_(spec.causal),
      weight_dropout_(option_value<float>(spec, "lightconv_weight_dropout")) {
  require_heads_divide(d_, heads_);
  in_.declare(params, name + ".in", d_, 2 * d_);
  conv_.declare(params, name + ".conv", d_, heads_, lightconv_kernel(spec), causal_, taps);
  o_.declare(params, name + ".o", d_, d_);
}

void LightConvMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                             const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  Saved* s = &reuse<Saved>(saved);
  s->x = x;
  s->batch = batch;
  s->t = t;
  s->lengths = lengths;
  const std::int64_t rows = batch * t, d = d_;
  s->pre = ctx.arena.alloc(rows * 2 * d);  // [B·T, 2d]
  in_.forward(ctx.params, x, s->pre, rows);
  s->u = ctx.arena.alloc(rows * d);  // [B·T, d]
  glu_forward(s->pre, s->u, rows, d);
  for (std::int64_t b = 0; b < batch; ++b) {  // fairseq's masked_fill: padding never feeds the convolution
    const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, t);
    std::fill(s->u + (b * t + len) * d, s->u + (b + 1) * t * d, 0.0f);
  }
  s->conv = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
  s->cell = conv_.forward(ctx, s->u, d, batch, t, lengths, weight_dropout_, 1.0f, s->conv, d);
  o_.forward(ctx.params, s->conv, y, rows);
}

void LightConvMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t rows = s.batch * s.t, d = d_;
  float* dconv = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
  o_.backward(ctx.params, s.conv, dy, dconv, rows);
  // U's gradient: the data path and (DynamicConv) the filter generator; 0 on pad rows.
  float* du = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
  conv_.backward(ctx, s.cell, s.u, d, s.batch, s.t, s.lengths, dconv, d, 1.0f, du, d);
  float* dpre = ctx.arena.alloc(rows * 2 * d);  // [B·T, 2d]
  glu_backward(s.pre, du, dpre, rows, d);
  in_.backward(ctx.params, s.x, dpre, dx, rows);
}

void LightConvMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                          std::int64_t t_max) const {
  if (!causal_) throw std::logic_error("LightConvMixer::step on a non-causal (encoder) mixer");
  const std::int64_t d = d_;
  float* pre = ctx.arena.alloc(n * 2 * d);  // [N, 2d]
  in_.forward(ctx.params, x, pre, n);
  float* u = ctx.arena.alloc(n * d);  // [N, d]
  glu_forward(pre, u, n, d);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(cache + (i * t_max + t) * d, u + i * d, sizeof(float) * d);
  float* conv = ctx.arena.alloc_zeroed(n * d);  // [N, d]: the causal conv over the cached U of t−k+1 … t
  conv_.step(ctx, u, d, cache, d, t_max, n, t, 1.0f, conv, d);
  o_.forward(ctx.params, conv, y, n);
}

MixerMaps LightConvMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t H = heads_, K = conv_.kernel, P = conv_.dims(s.batch, s.t).offset();
  const std::int64_t L = std::clamp<std::int64_t>(s.lengths[b], 0, s.t);
  MixerMaps maps = MixerMaps::zeros(H, L);
  nlohmann::json taps = nlohmann::json::array();
  for (std::int64_t i = 0; i < L; ++i) {
    nlohmann::json per_head = nlohmann::json::array();
    for (std::int64_t h = 0; h < H; ++h) {
      const float* w = s.cell.taps + ((b * s.t + i) * H + h) * K;  // [k]
      per_head.push_back(std::vector<float>(w, w + K));
      // Tap κ reads token i + κ − P; those outside the sentence read zeros and are left out.
      const std::int64_t lo = std::max<std::int64_t>(0, P - i), hi = std::min<std::int64_t>(K, L - i + P);
      double inside = 0.0;
      for (std::int64_t kk = lo; kk < hi; ++kk) inside += w[kk];
      if (inside <= 0.0) continue;
      float* row = maps.weights.data() + (h * L + i) * L;  // [L]
      for (std::int64_t kk = lo; kk < hi; ++kk) row[i + kk - P] = static_cast<float>(w[kk] / inside);
    }
    taps.push_back(std::move(per_head));
  }
  maps.extras["kernel"] = K;
  maps.extras["left"] = P;
  maps.extras["right"] = K - 1 - P;
  maps.extras["taps"] = std::move(taps);
  return maps;
}

}  // namespace attn::nn
