// The Transformer's encoder and decoder layers, pre-norm or post-norm, each a
// forward/backward pair (and, for the decoder, an incremental step).
//
//   pre-norm:  x = x + Drop(Sublayer(LN(x)))     (final LayerNorm on each stack)
//   post-norm: x = LN(x + Drop(Sublayer(x)))     (the original paper)
#pragma once
#include <cstdint>
#include <string>

#include "attn/nn/attention.h"
#include "attn/nn/context.h"
#include "attn/nn/dropout.h"
#include "attn/nn/feed_forward.h"
#include "attn/nn/layer_norm.h"

namespace attn::nn {

struct LayerShape {
  std::int64_t d = 0, heads = 0, ffn_dim = 0;
  float dropout = 0.0f, activation_dropout = 0.0f;
  bool pre_norm = true;
};

// One residual sublayer's saved state, shared by both layer kinds.
struct ResidualSaved {
  const float* x = nullptr;  // [rows, d] input of the block
  LayerNorm::Saved norm;
  float* normed = nullptr;   // pre-norm: LN(x), the sublayer input
  float* branch = nullptr;   // sublayer output after dropout
  Dropout::Saved drop;
  float* out = nullptr;      // [rows, d] output of the block
};

struct EncoderLayer {
  LayerShape shape;
  MultiHeadAttention self_attn;
  LayerNorm ln_attn, ln_ffn;
  FeedForward ffn;
  Dropout dropout;

  void declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape);

  struct Saved {
    ResidualSaved attn_block, ffn_block;
    MultiHeadAttention::Saved attn;
    FeedForward::Saved ffn;
  };
  // x: [B·T, d] → returns out: [B·T, d] (arena).
  float* forward(StepContext& ctx, const float* x, std::int64_t batch, std::int64_t t, const std::int32_t* lengths,
                 Saved& saved) const;
  // dout: [B·T, d]; accumulates dx.
  void backward(StepContext& ctx, const Saved& saved, const float* dout, float* dx) const;
};

// Per-layer decoder cache for incremental decoding: the keys and values of
// every position so far, and the encoder memory projected once.
struct DecoderLayerCache {
  float* self_kv = nullptr;    // [N, t_max, 2d]: k then v for each position
  float* cross_kv = nullptr;   // [N, Ts, 2d]
  std::int64_t t_max = 0, src_len = 0;
};

struct DecoderLayer {
  LayerShape shape;
  MultiHeadAttention self_attn, cross_attn;
  LayerNorm ln_self, ln_cross, ln_ffn;
  FeedForward ffn;
  Dropout dropout;

  void declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape);

  struct Saved {
    ResidualSaved self_block, cross_block, ffn_block;
    MultiHeadAttention::Saved self, cross;
    FeedForward::Saved ffn;
  };
  // x: [B·Tt, d], memory: [B·Ts, d] → returns out: [B·Tt, d] (arena).
  float* forward(StepContext& ctx, const float* x, const float* memory, std::int64_t batch, std::int64_t tt,
                 std::int64_t ts, const std::int32_t* tgt_lengths, const std::int32_t* src_lengths,
                 Saved& saved) const;
  // Accumulates dx: [B·Tt, d] and dmemory: [B·Ts, d].
  void backward(StepContext& ctx, const Saved& saved, const float* dout, float* dx, float* dmemory) const;

  // Projects the encoder memory [N·Ts, d] into cache.cross_kv.
  void start(StepContext& ctx, const float* memory, std::int64_t n, DecoderLayerCache& cache) const;
  // One position t for N hypotheses. x: [N, d] → returns [N, d] (arena).
  // src_lengths: [N]. cross_probs (optional, [N, H, Ts]) receives the cross-attention weights.
  float* step(StepContext& ctx, const float* x, std::int64_t n, std::int64_t t, const std::int32_t* src_lengths,
              DecoderLayerCache& cache, float* cross_probs) const;
};

}  // namespace attn::nn
