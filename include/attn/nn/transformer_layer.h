// The encoder and decoder layers every architecture is built from, each a
// forward/backward pair (and, for the decoder, an incremental step). The
// self-attention slot holds any TokenMixer; cross-attention is always
// multi-head attention.
//
// Sequential layout (Transformer, ConvSAN, Fast-DiSA), one residual block per sublayer:
//   pre-norm:  x = x + Drop(Sublayer(LN(x)))     (final LayerNorm on each stack)
//   post-norm: x = LN(x + Drop(Sublayer(x)))     (the original paper)
// Parallel layout (MUSE, docs/mechanisms-spec.md §0.2, §1.2), one residual block per layer
// whose branches all read the same input:
//   pre-norm:  x = x + Drop(Mixer(h)) [+ Drop(Cross(h, memory))] + Drop(FFN(h)),  h = LN(x)
//   post-norm: x = LN(x + Drop(Mixer(x)) [+ Drop(Cross(x, memory))] + Drop(FFN(x)))
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "attn/nn/attention.h"
#include "attn/nn/context.h"
#include "attn/nn/dropout.h"
#include "attn/nn/feed_forward.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

struct LayerShape {
  std::int64_t d = 0, heads = 0, ffn_dim = 0;
  float dropout = 0.0f, activation_dropout = 0.0f;
  bool pre_norm = true;
  bool parallel = false;  // MUSE's parallel layout
};

// One residual block's saved state: up to three branches summed into the residual.
struct ResidualSaved {
  static constexpr int kMaxBranches = 3;
  const float* x = nullptr;  // [rows, d] input of the block
  LayerNorm::Saved norm;
  float* normed = nullptr;  // pre-norm: LN(x), the branches' input; post-norm: the sum LN reads
  std::array<Dropout::Saved, kMaxBranches> drop{};
  float* out = nullptr;  // [rows, d] output of the block
};

struct EncoderLayer {
  LayerShape shape;
  std::unique_ptr<TokenMixer> self_attn;
  LayerNorm ln_attn, ln_ffn;  // parallel layout: ln_attn only, named "<name>.ln"
  FeedForward ffn;
  Dropout dropout;

  void declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape, const MixerSpec& mixer);

  struct Saved {
    ResidualSaved attn_block, ffn_block;  // parallel layout: attn_block only
    std::unique_ptr<TokenMixer::Saved> attn;
    FeedForward::Saved ffn;
    std::int64_t rows = 0;
  };
  // x: [B·T, d] → returns out: [B·T, d] (arena).
  float* forward(StepContext& ctx, const float* x, std::int64_t batch, std::int64_t t, const std::int32_t* lengths,
                 Saved& saved) const;
  // dout: [B·T, d]; accumulates dx.
  void backward(StepContext& ctx, const Saved& saved, const float* dout, float* dx) const;
};

// Per-layer decoder cache for incremental decoding: the self-attention mixer's
// entries for every position so far, and the encoder memory projected once.
// N = S·beams hypotheses, the beams of a sentence consecutive.
struct DecoderLayerCache {
  float* self_cache = nullptr;  // [N, t_max, self_width]
  float* cross_kv = nullptr;    // [S, Ts, 2d]: one per sentence, read by all its beams
  std::int64_t t_max = 0, src_len = 0, self_width = 0;
};

struct DecoderLayer {
  LayerShape shape;
  std::unique_ptr<TokenMixer> self_attn;
  MultiHeadAttention cross_attn;
  LayerNorm ln_self, ln_cross, ln_ffn;  // parallel layout: ln_self only, named "<name>.ln"
  FeedForward ffn;
  Dropout dropout;

  void declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape, const MixerSpec& mixer);

  struct Saved {
    ResidualSaved self_block, cross_block, ffn_block;  // parallel layout: self_block only
    std::unique_ptr<TokenMixer::Saved> self;
    MultiHeadAttention::Saved cross;
    FeedForward::Saved ffn;
    std::int64_t rows = 0;
  };
  // x: [B·Tt, d], memory: [B·Ts, d] → returns out: [B·Tt, d] (arena).
  float* forward(StepContext& ctx, const float* x, const float* memory, std::int64_t batch, std::int64_t tt,
                 std::int64_t ts, const std::int32_t* tgt_lengths, const std::int32_t* src_lengths, Saved& saved) const;
  // Accumulates dx: [B·Tt, d] and dmemory: [B·Ts, d].
  void backward(StepContext& ctx, const Saved& saved, const float* dout, float* dx, float* dmemory) const;

  // Allocates the self cache of S·beams hypotheses (not zeroed: a mixer's step
  // writes position t and reads only positions < t).
  void start_self(StepContext& ctx, std::int64_t sentences, std::int64_t beams, DecoderLayerCache& cache) const;
  // Projects the encoder memory [S·Ts, d] into cache.cross_kv.
  void start_cross(StepContext& ctx, const float* memory, std::int64_t sentences, DecoderLayerCache& cache) const;
  // One position t for N = S·beams hypotheses. x: [N, d] → returns [N, d] (arena). src_lengths: [S].
  float* step(StepContext& ctx, const float* x, std::int64_t sentences, std::int64_t beams, std::int64_t t,
              const std::int32_t* src_lengths, DecoderLayerCache& cache) const;
};

}  // namespace attn::nn
