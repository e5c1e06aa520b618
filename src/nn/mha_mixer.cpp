#include "attn/nn/mha_mixer.h"

#include <algorithm>

namespace attn::nn {

MhaMixer::MhaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec) : causal_(spec.causal) {
  attn_.declare(params, name, spec.d, spec.heads);
}

std::unique_ptr<TokenMixer::Saved> MhaMixer::forward(StepContext& ctx, const float* x, float* y,
                                                     std::int64_t batch, std::int64_t t,
                                                     const std::int32_t* lengths) const {
  auto saved = std::make_unique<Saved>();
  saved->attn = attn_.forward_self(ctx, x, y, batch, t, lengths, causal_);
  return saved;
}

void MhaMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  attn_.backward(ctx, static_cast<const Saved&>(saved).attn, dy, dx, nullptr);
}

void MhaMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                    std::int64_t t_max) const {
  attn_.step_self(ctx, x, y, n, t, cache, t_max);
}

MixerMaps maps_from_probs(const float* probs, std::int64_t batch_index, std::int64_t heads, std::int64_t t,
                          std::int64_t length) {
  MixerMaps maps;
  maps.heads = heads;
  maps.length = length;
  maps.weights.resize(static_cast<std::size_t>(heads * length * length));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < length; ++i) {
      const float* row = probs + ((batch_index * heads + h) * t + i) * t;
      std::copy(row, row + length, maps.weights.begin() + (h * length + i) * length);
    }
  return maps;
}

MixerMaps MhaMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const MultiHeadAttention::Saved& s = static_cast<const Saved&>(saved).attn;
  return maps_from_probs(s.probs, b, s.dims.heads, s.dims.tq, s.q_len[b]);
}

}  // namespace attn::nn
