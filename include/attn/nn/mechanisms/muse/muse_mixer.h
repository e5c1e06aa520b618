// MUSE's mixer (docs/mechanisms-spec.md §1.1–1.4, §4.3): one shared value projection V
// feeds global multi-head attention and the gated dynamic depth-wise
// convolution cells in parallel; one output projection reads both:
//   [Q K V] = X · [Wq; Wk; Wv]ᵀ + b                  (one GEMM)
//   Att     = MHA(Q, K, V)                           (causal in the decoder; attention
//                                                     dropout on its weights in training)
//   Cmix    = Σ_i π_i · DynConv_{k_i}(V),  π = softmax(α)
//   Y       = [Att ; Cmix] · Woᵀ + b_o               Wo: [d, 2d]
// With no kernels (MUSE-simple) the mixer is exactly MHA: Y = Att · Woᵀ + b_o,
// Wo: [d, d]. The FFN branch and the residual are the layer's business.
// MUSE-separate (the paper's "unified semantic space" ablation) gives the cells
// their own projection: Cmix = Σ_i π_i · DynConv_{k_i}(X · Wcᵀ), Wc: [d, d], no bias.
//
// Parameters: "<name>.{q,k,v}.weight" [d, d] and ".bias" [d] (declared like
// MultiHeadAttention, so q, k, v are one [3d, d] matrix), "<name>.conv.<i>.weight"
// [H·k_i, d], "<name>.gate" [n], "<name>.o.weight" [d, 2d] (or [d, d]), "<name>.o.bias" [d];
// MUSE-separate adds "<name>.conv_in.weight" [d, d] after q, k, v.
#pragma once
#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/muse/dynamic_conv.h"
#include "attn/nn/linear.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class MuseMixer final : public TokenMixer {
 public:
  MuseMixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

  struct Saved final : TokenMixer::Saved {
    // The attention branch: x, qkv [B·T, 3d] (V, the shared projection, at
    // column 2d), probs (undropped), its dropout, and context = cat.
    MultiHeadAttention::Saved attn;
    float* conv_in = nullptr;  // [B·T, d] the cells' own projection (MUSE-separate), else null
    float* cat = nullptr;      // [B·T, width]: Att at column 0, Cmix at column d
    MultiScaleConv::Saved conv;
    std::int64_t batch = 0, t = 0;
    const std::int32_t* lengths = nullptr;
  };
  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;
  // Cache entry per position: k then v, [2d] (as MhaMixer), then for
  // MUSE-separate the cells' input [d]; the causal conv reads the cached
  // v (or cells' input) of the last k − 1 positions.
  std::int64_t cache_width() const override { return separate_ ? 3 * d_ : 2 * d_; }
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;
  // weights: attention probs [H][L][L]; extras: "kernels" [n], "gate" [π_i],
  // "taps": per kernel i, [L][H][k_i] the normalised (undropped) taps of each token.
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return conv_.empty() ? "muse-simple" : "muse"; }
  bool separate_conv_projection() const { return separate_; }

 private:
  // Width of [Att ; Cmix]: 2d, or d without conv cells.
  std::int64_t width() const { return conv_.empty() ? d_ : 2 * d_; }

  std::int64_t d_ = 0, heads_ = 0;
  bool causal_ = false;
  bool separate_ = false;  // cells read conv_in_ · x, not V

  // q, k, v and the attention itself (its o unused: o_ reads [Att ; Cmix]);
  // its attention dropout acts on the branch's weights, not the taps (muse_tap_dropout).
  MultiHeadAttention attn_;
  Linear conv_in_;  // [d, d], no bias (MUSE-separate only)
  MultiScaleConv conv_;
  Linear o_;  // [d, width]
};

}  // namespace attn::nn
