// LightConv and DynamicConv (Wu et al. 2019, "Pay Less Attention with
// Lightweight and Dynamic Convolutions"; fairseq's lightconv model): the
// block that takes self-attention's place (docs/mechanisms.md, "LightConv and
// DynamicConv"):
//   [A G] = X · Winᵀ + b_in                Win: [2d, d]
//   U     = A ⊙ σ(G)                       GLU; U counts as 0 outside [0, length_b)
//   C     = DepthwiseConv_k(U)             H heads; channel c uses head c / (d/H)'s taps
//   Y     = C · Woᵀ + b_o                  Wo: [d, d]
// The taps of a head are softmax-normalised over its k taps, DropConnect'ed in
// training (lightconv_weight_dropout), and
//   LightConv:   one kernel per head, W: [H, k], shared by every position;
//   DynamicConv: predicted from the current position, z = U_t · Wfᵀ, Wf: [H·k, d].
// Both are MUSE's dynamic-convolution cell (muse/dynamic_conv.h; fixed or
// predicted taps). The kernel size grows with depth (the options'
// lists, entry `layer`, the last entry past the list's end); the encoder's
// window is centred (P = k/2), the decoder's causal (P = k − 1).
//
// Parameters: "<name>.in.weight" [2d, d], "<name>.in.bias" [2d],
// "<name>.conv.weight" ([H, k] or [H·k, d]), "<name>.o.weight" [d, d], "<name>.o.bias" [d].
#pragma once
#include "attn/nn/linear.h"
#include "attn/nn/mechanisms/muse/dynamic_conv.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class LightConvMixer final : public TokenMixer {
 public:
  // taps: fixed (LightConv) or predicted (DynamicConv).
  LightConvMixer(ParamStore& params, const std::string& name, const MixerSpec& spec, TapSource taps);

  struct Saved final : TokenMixer::Saved {
    const float* x = nullptr;  // [B·T, d] the input
    float* pre = nullptr;      // [B·T, 2d] the GLU's input [A G]
    float* u = nullptr;        // [B·T, d] the GLU's output (pad rows 0), the convolution's input
    float* conv = nullptr;     // [B·T, d] C (pad rows 0)
    DynamicConvCell::Saved cell;
    std::int64_t batch = 0, t = 0;
    const std::int32_t* lengths = nullptr;
  };
  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;
  // Cache entry per position: U [d]. step() reads the entries of the last
  // k − 1 positions (and writes position t's); older ones are never read.
  std::int64_t cache_width() const override { return d_; }
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;
  // weights: the band of each token's taps, [H][L][L]: row i holds tap κ at
  // column i + κ − P, renormalised over the taps inside the sentence so it
  // sums to 1 (at the edges taps read zeros); extras: "kernel" k, "left" P,
  // "right" k − 1 − P, "taps" [L][H][k] the normalised (undropped) taps.
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return conv_.source == TapSource::fixed ? "lightconv" : "dynamicconv"; }

  std::int64_t kernel() const { return conv_.kernel; }

 private:
  std::int64_t d_ = 0, heads_ = 0;
  bool causal_ = false;
  float weight_dropout_ = 0.0f;  // DropConnect on the taps (fairseq's weight_dropout)
  Linear in_;                    // [2d, d]
  DynamicConvCell conv_;
  Linear o_;  // [d, d]
};

// The kernel size of a LightConv/DynamicConv mixer of this spec: entry
// spec.layer of the encoder's or (causal) decoder's list, the last entry past its end.
std::int64_t lightconv_kernel(const MixerSpec& spec);

}  // namespace attn::nn
