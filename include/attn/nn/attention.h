// Scaled dot-product attention over heads, with per-sequence lengths, and the
// multi-head attention layer built on it (self, causal self, cross).
//
// Tensors stay in the [rows, features] layout of the projections: element
// (b, t, h, j) of a HeadsView sits at data[b·batch_stride + t·row_stride + h·dh + j].
// So Q, K and V are read straight out of a fused QKV projection, and a KV cache
// [n, t_max, d] is read in place, with no transposes.
#pragma once
#include <cstdint>
#include <string>

#include "attn/nn/context.h"
#include "attn/nn/linear.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

struct HeadsView {
  float* data = nullptr;
  std::int64_t row_stride = 0;    // floats between positions t and t+1
  std::int64_t batch_stride = 0;  // floats between sequences b and b+1
  float* at(std::int64_t b, std::int64_t t) const { return data + b * batch_stride + t * row_stride; }
};

struct AttentionDims {
  std::int64_t batch = 0, heads = 0, head_dim = 0;
  std::int64_t tq = 0, tk = 0;  // padded query and key lengths
};

// Dropout on attention weights (`attn train --attention-dropout`, fairseq's
// --attention-dropout): in training with p > 0 a mixer uses W̃ = W ⊙ keep / (1 − p)
// where it applies the weights W (after the softmax) to the values, while W
// itself — what the softmax backward and export_maps read — stays undropped.
// Backward: the value gradient uses W̃, and ∂L/∂W = ∂L/∂W̃ ⊙ keep / (1 − p).
// The weights are rows of `width` (e.g. one query's weights over its keys);
// row r's mask comes from the Philox blocks counter + r·⌈width/4⌉ (the
// dropout kernel's rule within the row), so it is a pure function of the
// step's Rng, whichever thread draws it, and a row is drawn on its own
// inside a mixer's (sequence, head) loop. Rows never drawn hold no mask and
// must not be applied.
struct WeightDropout {
  float p = 0.0f;                // drop probability of one weight
  std::uint8_t* keep = nullptr;  // [rows, width]; null: no dropout (evaluation or p = 0)
  std::int64_t width = 0;
  std::uint64_t seed = 0, counter = 0;

  bool active() const { return keep != nullptr; }
  // Draws row r's mask; y = x ⊙ keep_r / (1 − p). x, y: [width], may alias.
  void draw(std::int64_t r, const float* x, float* y) const;
  // y = x ⊙ keep / (1 − p) over elements [first, first + n) of row r, with
  // its drawn mask: the dropped weights again (bitwise what draw wrote), or
  // ∂L/∂W from ∂L/∂W̃. x, y: [n] (element `first` of the row), may alias.
  void apply(std::int64_t r, const float* x, float* y, std::int64_t n, std::int64_t first = 0) const;
  // The factor of a kept weight: w̃ = keep ? w · keep_scale() : 0 (bitwise the kernels').
  float keep_scale() const { return 1.0f / (1.0f - p); }
};

// Masks for `rows` rows of `width` weights: reserves them in the arena and
// their blocks in ctx.rng when ctx.training and p > 0, else returns an
// inactive WeightDropout (nothing reserved, the Rng untouched).
WeightDropout weight_dropout(StepContext& ctx, float p, std::int64_t rows, std::int64_t width);

// probs: [batch, heads, tq, tk]. Query t of sequence b attends keys j < k_len[b]
// (and j ≤ t when causal); queries t ≥ q_len[b] get output 0 and probs 0; no
// padded key is ever attended. out is written. drop (rows [batch·heads·tq],
// width tk, from weight_dropout), when active, draws its mask for every real
// query row and applies it to the probs multiplying v; probs stay undropped.
// Inactive, the computation is exactly the undropped one.
void attention_forward(const AttentionDims& dims, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                       const std::int32_t* q_len, const std::int32_t* k_len, bool causal, const WeightDropout& drop,
                       kernels::ComputeType type);

// Accumulates dq, dk, dv from dout, given the forward's probs and its dropout.
void attention_backward(const AttentionDims& dims, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                        HeadsView dout, HeadsView dq, HeadsView dk, HeadsView dv, const std::int32_t* q_len,
                        const std::int32_t* k_len, bool causal, const WeightDropout& drop, kernels::ComputeType type);

// Declares "<name>.{q,k,v}.weight" [d, d] (Xavier) and "<name>.{q,k,v}.bias"
// [d] (zeros) — weights first, then biases, each trio contiguous — so that
// they are one [3d, d] projection, which is returned.
Linear declare_qkv(ParamStore& params, const std::string& name, std::int64_t d);

// Multi-head attention with separate q/k/v/o projections named like PyTorch
// modules ("<name>.q.weight", …). The q, k and v weights (and biases) are
// declared one after another, so they are one [3d, d] matrix in the store and
// self-attention projects with a single GEMM (cross-attention: k and v in one).
// Each role declares only the views it multiplies by: a weight matrix is held
// in its compute type's form, and a form nothing reads is memory for nothing.
struct MultiHeadAttention {
  std::int64_t d = 0, heads = 0;
  float attention_dropout = 0.0f;  // on the probs in training (WeightDropout); set after declare
  Linear o;
  Linear qkv;  // self-attention: q, k, v as one [3d, d] projection
  Linear q;    // cross-attention: the queries' [d, d] projection
  Linear kv;   // cross-attention: k, v as one [2d, d] projection

  // Self-attention.
  void declare(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads);
  // Cross-attention: the same parameters, multiplied as q and kv.
  void declare_cross(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads);
  // q, k and v only, for a self-attention mixer whose own output projection reads more than
  // the attention (MUSE declares it after its convolutions); o stays unset.
  void declare_projections(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads);

  struct Saved {
    const float* x = nullptr;       // [B·Tq, d] query input
    const float* memory = nullptr;  // [B·Tk, d] key/value input (cross), else null
    float* qkv = nullptr;           // self: [B·T, 3d]; cross: q [B·Tq, d] then kv [B·Tk, 2d]
    float* probs = nullptr;         // [B, H, Tq, Tk]
    float* context = nullptr;       // [B·Tq, d] before the output projection
    AttentionDims dims;
    const std::int32_t* q_len = nullptr;
    const std::int32_t* k_len = nullptr;
    bool causal = false;
    WeightDropout drop;  // the forward's attention dropout (inactive in evaluation or at p = 0)
  };

  // Self-attention. x: [B·T, d] → y: [B·T, d] (written).
  Saved forward_self(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                     const std::int32_t* lengths, bool causal) const;
  // Cross-attention. x: [B·Tq, d], memory: [B·Tk, d] → y: [B·Tq, d].
  Saved forward_cross(StepContext& ctx, const float* x, const float* memory, float* y, std::int64_t batch,
                      std::int64_t tq, std::int64_t tk, const std::int32_t* q_len, const std::int32_t* k_len) const;
  // Accumulates dx: [B·Tq, d] and, for cross, dmemory: [B·Tk, d].
  void backward(StepContext& ctx, const Saved& saved, const float* dy, float* dx, float* dmemory) const;

  // The same, up to the output projection, for mixers that put more beside
  // the attention (MUSE): context rows of stride ld (written) hold the
  // attended values; Saved.context points at them.
  Saved attend_self(StepContext& ctx, const float* x, float* context, std::int64_t ld, std::int64_t batch,
                    std::int64_t t, const std::int32_t* lengths, bool causal) const;
  // Its backward from dcontext (rows of stride ld) to the projections:
  // returns dqkv [B·T, 3d] (arena); the caller adds its own paths into V's
  // part, then runs qkv.backward.
  float* attend_self_backward(StepContext& ctx, const Saved& saved, const float* dcontext, std::int64_t ld) const;
  // One decoding step up to the output projection: appends this position's
  // k, v to cache (rows of width cw: k at 0, v at d), writes context rows of
  // stride ld, and returns the projections [N, 3d] (arena).
  float* attend_step(StepContext& ctx, const float* x, std::int64_t n, std::int64_t t, float* cache, std::int64_t cw,
                     std::int64_t t_max, float* context, std::int64_t ld) const;

  // Incremental decoding, N hypotheses at position t. x: [N, d] → y: [N, d].
  // Self: appends this position's k, v to cache [N, t_max, 2d], attends keys 0..t.
  void step_self(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                 std::int64_t t_max) const;
  // Cross: the `beams` consecutive hypotheses of each sentence attend their
  // sentence's projected memory together, as one [beams, Ts] product.
  // x: [S·beams, d] → y: [S·beams, d]; kv: [S, Ts, 2d] (from project_memory); src_lengths: [S].
  void step_cross(StepContext& ctx, const float* x, float* y, std::int64_t sentences, std::int64_t beams,
                  const float* kv, std::int64_t ts, const std::int32_t* src_lengths) const;
  // memory: [rows, d] → kv: [rows, 2d].
  void project_memory(const ParamStore& params, const float* memory, float* kv_out, std::int64_t rows) const;
};

// The [heads, L, L] block of sequence b out of probs [B, H, T, T].
MixerMaps maps_from_probs(const float* probs, std::int64_t batch_index, std::int64_t heads, std::int64_t t,
                          std::int64_t length);

}  // namespace attn::nn
