#include "attn/nn/mechanisms/muse/muse_mixer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "attn/core/error.h"
#include "attn/nn/attention.h"
#include "attn/nn/mechanism.h"

namespace attn::nn {

MuseMixer::MuseMixer(ParamStore& params, const std::string& name, const MixerSpec& spec)
    : d_(spec.d), heads_(spec.heads), causal_(spec.causal),
      separate_(option_value<bool>(spec, "muse_separate_projection")) {
  const auto kernels = option_value<std::vector<std::int64_t>>(spec, "muse_kernels");
  separate_ = separate_ && !kernels.empty();
  require_heads_divide(d_, heads_);
  attn_.declare_projections(params, name, d_, heads_);
  attn_.attention_dropout = spec.attention_dropout;
  if (separate_) conv_in_.declare(params, name + ".conv_in", d_, d_, /*with_bias=*/false);
  conv_.declare(params, name, d_, heads_, kernels, causal_, option_value<float>(spec, "muse_tap_dropout"));
  o_.declare(params, name + ".o", width(), d_);
}

void MuseMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                        const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  Saved* s = &reuse<Saved>(saved);
  s->batch = batch;
  s->t = t;
  s->lengths = lengths;
  const std::int64_t rows = batch * t, d = d_, w = width();
  s->cat = ctx.arena.alloc(rows * w);  // [B·T, width]
  s->attn = attn_.attend_self(ctx, x, s->cat, w, batch, t, lengths, causal_);
  // The conv cells read the same V as attention, in place (or their own projection).
  if (separate_) {
    s->conv_in = ctx.arena.alloc(rows * d);  // [B·T, d]
    conv_in_.forward(ctx.params, x, s->conv_in, rows);
  }
  if (!conv_.empty()) {
    const float* v = separate_ ? s->conv_in : s->attn.qkv + 2 * d;  // rows of stride ldv
    const std::int64_t ldv = separate_ ? d : 3 * d;
    conv_.forward(ctx, v, ldv, batch, t, lengths, s->cat + d, w, s->conv);
  }
  o_.forward(ctx.params, s->cat, y, rows);
}

void MuseMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t t = s.t, rows = s.batch * t, d = d_, w = width(), stride = 3 * d;
  float* dcat = ctx.arena.alloc_zeroed(rows * w);  // [B·T, width]: dAtt | dCmix
  o_.backward(ctx.params, s.cat, dy, dcat, rows);
  float* dqkv = attn_.attend_self_backward(ctx, s.attn, dcat, w);  // [B·T, 3d]
  // V's gradient: attention values (above), then every cell's data and filter-generator paths
  // (MUSE-separate: those go to the cells' own input and on through Wc into dx).
  const float* x = s.attn.x;
  if (separate_) {
    float* dconv_in = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
    conv_.backward(ctx, s.conv, s.conv_in, d, s.batch, t, s.lengths, dcat + d, w, dconv_in, d);
    conv_in_.backward(ctx.params, x, dconv_in, dx, rows);
  } else if (!conv_.empty()) {
    conv_.backward(ctx, s.conv, s.attn.qkv + 2 * d, stride, s.batch, t, s.lengths, dcat + d, w, dqkv + 2 * d, stride);
  }
  attn_.qkv.backward(ctx.params, x, dqkv, dx, rows);
}

void MuseMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                     std::int64_t t_max) const {
  if (!causal_) throw std::logic_error("MuseMixer::step on a non-causal (encoder) mixer");
  const std::int64_t d = d_, w = width(), cw = cache_width();
  float* cat = ctx.arena.alloc(n * w);                                            // [N, width]
  const float* proj = attn_.attend_step(ctx, x, n, t, cache, cw, t_max, cat, w);  // [N, 3d]
  // Causal conv over the cached v (or cells' input) of positions t−k+1 … t.
  if (separate_) {
    float* conv_in = ctx.arena.alloc(n * d);  // [N, d]
    conv_in_.forward(ctx.params, x, conv_in, n);
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(cache + (i * t_max + t) * cw + 2 * d, conv_in + i * d, sizeof(float) * d);
    conv_.step(ctx, conv_in, d, cache + 2 * d, cw, t_max, n, t, cat + d, w);
  } else {
    conv_.step(ctx, proj + 2 * d, 3 * d, cache + d, cw, t_max, n, t, cat + d, w);
  }
  o_.forward(ctx.params, cat, y, n);
}

MixerMaps MuseMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, s.t);
  MixerMaps maps = maps_from_probs(s.attn.probs, b, heads_, s.t, len);
  if (conv_.empty()) return maps;
  nlohmann::json kernel_sizes = nlohmann::json::array(), taps = nlohmann::json::array();
  for (std::size_t i = 0; i < conv_.cells.size(); ++i) {
    const std::int64_t k = conv_.cells[i].kernel;
    kernel_sizes.push_back(k);
    const float* w = s.conv.cells[i].taps + b * s.t * heads_ * k;  // [T, H, k] of sequence b
    nlohmann::json per_token = nlohmann::json::array();
    for (std::int64_t t = 0; t < len; ++t) {
      nlohmann::json per_head = nlohmann::json::array();
      for (std::int64_t h = 0; h < heads_; ++h) {
        const float* row = w + (t * heads_ + h) * k;
        per_head.push_back(std::vector<float>(row, row + k));
      }
      per_token.push_back(std::move(per_head));
    }
    taps.push_back(std::move(per_token));
  }
  maps.extras["kernels"] = std::move(kernel_sizes);
  maps.extras["gate"] = s.conv.pi;
  maps.extras["taps"] = std::move(taps);
  return maps;
}

}  // namespace attn::nn
