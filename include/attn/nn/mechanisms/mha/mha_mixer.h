// Multi-head attention as a TokenMixer: global (encoder) or causal (decoder)
// self-attention, parameters "<name>.{q,k,v,o}.{weight,bias}".
#pragma once
#include "attn/nn/attention.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class MhaMixer final : public TokenMixer {
 public:
  MhaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

  struct Saved final : TokenMixer::Saved {
    MultiHeadAttention::Saved attn;
  };
  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;
  // Cache entry per position: k then v, [2d].
  std::int64_t cache_width() const override { return 2 * attn_.d; }
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return "mha"; }

  const MultiHeadAttention& attention() const { return attn_; }

 private:
  MultiHeadAttention attn_;
  bool causal_ = false;
};

}  // namespace attn::nn
