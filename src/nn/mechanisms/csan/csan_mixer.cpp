#include "attn/nn/mechanisms/csan/csan_mixer.h"

#include <algorithm>
#include <cstring>

#include "attn/core/error.h"
#include "attn/nn/mechanism.h"

namespace attn::nn {

CsanMixer::CsanMixer(ParamStore& params, const std::string& name, const MixerSpec& spec)
    : window_(option_value<std::int64_t>(spec, "csan_window")),
      head_window_(option_value<std::int64_t>(spec, "csan_head_window")),
      wrap_heads_(option_value<std::string>(spec, "csan_head_boundary") == "wrap"), causal_(spec.causal) {
  // Checked before anything is declared, so a rejected spec leaves the store untouched.
  require(window_ >= 1 && window_ % 2 == 1,
          "--csan-window " + std::to_string(window_) +
              " is not allowed: the window is centred on the query (±(window−1)/2 positions), so it must be an odd "
              "number ≥ 1; use e.g. --csan-window 11");
  require(head_window_ >= 1 && head_window_ % 2 == 1,
          "--csan-head-window " + std::to_string(head_window_) +
              " is not allowed: the head area is centred on the query's head, so it must be an odd number ≥ 1; use 1 "
              "(1D) or 3 (2D)");
  require_heads_divide(spec.d, spec.heads);
  left_ = (window_ - 1) / 2;
  right_ = causal_ ? 0 : left_;
  attn_.declare(params, name, spec.d, spec.heads);
  attn_.attention_dropout = spec.attention_dropout;
}

BandDims CsanMixer::dims_for(std::int64_t batch, std::int64_t t) const {
  const std::int64_t reach = std::max<std::int64_t>(t - 1, 0);  // no key is further than t−1 away
  return {batch,        attn_.heads, attn_.d / attn_.heads, t, std::min(left_, reach), std::min(right_, reach),
          head_window_, wrap_heads_};
}

void CsanMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                        const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  Saved* s = &reuse<Saved>(saved);
  const std::int64_t d = attn_.d, rows = batch * t, stride = 3 * d;
  s->x = x;
  s->dims = dims_for(batch, t);
  s->lengths = lengths;
  s->qkv = ctx.arena.alloc(rows * stride);
  attn_.qkv.forward(ctx.params, x, s->qkv, rows);
  s->probs = ctx.arena.alloc(s->dims.probs_size());
  s->context = ctx.arena.alloc(rows * d);
  s->drop = weight_dropout(ctx, attn_.attention_dropout, batch * s->dims.heads * t, s->dims.slots());
  band_attention_forward(s->dims, {s->qkv, stride, t * stride}, {s->qkv + d, stride, t * stride},
                         {s->qkv + 2 * d, stride, t * stride}, {s->context, d, t * d}, s->probs, lengths, s->drop);
  attn_.o.forward(ctx.params, s->context, y, rows);
}

void CsanMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t d = attn_.d, t = s.dims.t, rows = s.dims.batch * t, stride = 3 * d;
  const Arena::Mark mark = ctx.arena.mark();           // the temporaries below die with this call
  float* dcontext = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
  attn_.o.backward(ctx.params, s.context, dy, dcontext, rows);
  float* dqkv = ctx.arena.alloc_zeroed(rows * stride);    // [B·T, 3d]
  float* scratch = ctx.arena.alloc(s.dims.probs_size());  // score gradients, [B, H, T, N, M]
  band_attention_backward(s.dims, {s.qkv, stride, t * stride}, {s.qkv + d, stride, t * stride},
                          {s.qkv + 2 * d, stride, t * stride}, s.probs, {dcontext, d, t * d},
                          {dqkv, stride, t * stride}, {dqkv + d, stride, t * stride},
                          {dqkv + 2 * d, stride, t * stride}, s.lengths, scratch, s.drop);
  attn_.qkv.backward(ctx.params, s.x, dqkv, dx, rows);
  ctx.arena.release(mark);
}

void CsanMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                     std::int64_t t_max) const {
  require(causal_, "ConvSAN: incremental decoding needs the causal variant (decoder self-attention)");
  const std::int64_t d = attn_.d;
  float* proj = ctx.arena.alloc(n * 3 * d);  // [N, 3d]
  attn_.qkv.forward(ctx.params, x, proj, n);
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(cache + (i * t_max + t) * 2 * d, proj + i * 3 * d + d, sizeof(float) * 2 * d);
  // Position t sees cached positions max(0, t−left)..t.
  const BandDims dims{n, attn_.heads, d / attn_.heads, t_max, std::min(left_, t), 0, head_window_};
  float* probs = ctx.arena.alloc(n * dims.heads * dims.slots());  // [N, H, head_window, width]
  float* context = ctx.arena.alloc(n * d);                        // [N, d]
  band_attention_step(dims, {proj, 3 * d, 3 * d}, {cache, 2 * d, t_max * 2 * d}, {cache + d, 2 * d, t_max * 2 * d},
                      {context, d, d}, probs, t);
  attn_.o.forward(ctx.params, context, y, n);
}

MixerMaps CsanMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const BandDims& dims = s.dims;
  const std::int64_t H = dims.heads, T = dims.t, M = dims.width(), N = dims.head_window, n = (N - 1) / 2;
  const std::int64_t L = std::clamp<std::int64_t>(s.lengths[b], 0, T);
  MixerMaps maps = MixerMaps::zeros(H, L);
  nlohmann::json head_weights = nlohmann::json::array();
  for (std::int64_t h = 0; h < H; ++h) {
    nlohmann::json per_query = nlohmann::json::array();
    for (std::int64_t i = 0; i < L; ++i) {
      const float* p = s.probs + ((b * H + h) * T + i) * dims.slots();  // [N, M]
      float* row = maps.weights.data() + (h * L + i) * L;               // [L]
      nlohmann::json per_head = nlohmann::json::array();
      for (std::int64_t s_off = 0; s_off < N; ++s_off) {
        const std::int64_t key_head = h + s_off - n;
        if (!wrap_heads_ && (key_head < 0 || key_head >= H)) {
          per_head.push_back(nullptr);  // dropped at the boundary
          continue;
        }
        float total = 0.0f;
        for (std::int64_t o = 0; o < M; ++o) {
          const std::int64_t j = i + o - dims.left;
          if (j < 0 || j >= L) continue;  // such slots hold 0
          row[j] += p[s_off * M + o];
          total += p[s_off * M + o];
        }
        per_head.push_back(total);
      }
      per_query.push_back(std::move(per_head));
    }
    head_weights.push_back(std::move(per_query));
  }
  maps.extras = {{"window", window_},
                 {"left", left_},
                 {"right", right_},
                 {"head_window", head_window_},
                 {"head_policy", wrap_heads_ ? "wrap" : "truncate"},
                 {"head_weights", std::move(head_weights)}};
  return maps;
}

}  // namespace attn::nn
