#include "attn/nn/mechanisms/mha/mha_mixer.h"

namespace attn::nn {

MhaMixer::MhaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec) : causal_(spec.causal) {
  attn_.declare(params, name, spec.d, spec.heads);
  attn_.attention_dropout = spec.attention_dropout;
}

void MhaMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                       const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  reuse<Saved>(saved).attn = attn_.forward_self(ctx, x, y, batch, t, lengths, causal_);
}

void MhaMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  attn_.backward(ctx, static_cast<const Saved&>(saved).attn, dy, dx, nullptr);
}

void MhaMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                    std::int64_t t_max) const {
  attn_.step_self(ctx, x, y, n, t, cache, t_max);
}

MixerMaps MhaMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const MultiHeadAttention::Saved& s = static_cast<const Saved&>(saved).attn;
  return maps_from_probs(s.probs, b, s.dims.heads, s.dims.tq, s.q_len[b]);
}

}  // namespace attn::nn
