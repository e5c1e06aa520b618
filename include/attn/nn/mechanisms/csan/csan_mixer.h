// Convolutional Self-Attention (Yang et al. 2019; docs/mechanisms-spec.md §2) as a
// TokenMixer: multi-head attention whose queries see only a window of
// `window` positions around themselves (1D) or, with head_window 3, the same
// window in the neighbouring heads too, under one joint softmax (2D; heads
// outside 0..H−1 are dropped, or with csan_head_boundary "wrap" handled as
// the authors' code does: keys wrap, values clamp). The causal variant (our extension, §2.4) sees
// [i−(window−1)/2, i].
//
// No new parameters: the projections are MultiHeadAttention's, so a ConvSAN
// model has exactly the Transformer's parameter names
// ("<name>.{q,k,v,o}.{weight,bias}", q/k/v fused into one [3d, d] GEMM).
#pragma once
#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/csan/band_attention.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class CsanMixer final : public TokenMixer {
 public:
  // Uses spec.d, spec.heads, spec.window, spec.head_window, spec.causal.
  // Throws attn::Error for an even or non-positive window or head window.
  CsanMixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

  struct Saved final : TokenMixer::Saved {
    const float* x = nullptr;  // [B·T, d]
    float* qkv = nullptr;      // [B·T, 3d]
    float* probs = nullptr;    // [B, H, T, head_window, left+right+1] (left/right clipped to T−1), undropped
    WeightDropout drop;        // attention dropout on probs, same layout (inactive in evaluation or at p = 0)
    float* context = nullptr;  // [B·T, d] before the output projection
    BandDims dims;
    const std::int32_t* lengths = nullptr;  // [B]
  };
  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;
  // Cache entry per position: k then v, [2d]. Only the last (window+1)/2 are read.
  std::int64_t cache_width() const override { return 2 * attn_.d; }
  // Causal variant only (throws otherwise).
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;
  // Weights [heads][L][L] (2D: summed over the key heads), extras: window,
  // left, right, head_window, head_policy (truncate | wrap), head_weights
  // [heads][L][head_window] (null for dropped heads).
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return head_window_ > 1 ? "csan2d" : "csan"; }

  const MultiHeadAttention& attention() const { return attn_; }

 private:
  // The band for sequences of padded length t: the window clipped to what
  // t positions can reach (same result, no all-zero slots stored).
  BandDims dims_for(std::int64_t batch, std::int64_t t) const;

  MultiHeadAttention attn_;
  std::int64_t window_ = 1, left_ = 0, right_ = 0, head_window_ = 1;
  bool wrap_heads_ = false;  // the authors' boundary heads (band_attention.h)
  bool causal_ = false;
};

}  // namespace attn::nn
