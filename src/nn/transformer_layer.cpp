#include "attn/nn/transformer_layer.h"

#include <cstring>
#include <initializer_list>

#include "attn/core/error.h"
#include "attn/core/function_ref.h"
#include "attn/kernels/elementwise.h"

namespace attn::nn {

namespace {

// branch(const float* in [rows, d], float* out [rows, d]) writes out.
using Branch = FunctionRef<void(const float*, float*)>;
// branch_backward(const float* dbranch [rows, d], float* din [rows, d]) accumulates din.
using BranchBackward = FunctionRef<void(const float*, float*)>;

// out = x + Σ Drop(branch_i(LN(x))) (pre-norm) or LN(x + Σ Drop(branch_i(x))) (post-norm).
float* residual_forward(StepContext& ctx, const LayerShape& shape, const LayerNorm& ln, const Dropout& drop,
                        const float* x, std::int64_t rows, ResidualSaved& s, std::initializer_list<Branch> branches) {
  const std::int64_t n = rows * shape.d;
  s.x = x;
  s.out = ctx.arena.alloc(n);
  s.normed = ctx.arena.alloc(n);
  const float* input = x;
  if (shape.pre_norm) {
    s.norm = ln.forward(ctx, x, s.normed, rows);
    input = s.normed;
  }
  // Backward needs no branch output, only its dropout mask: the first branch
  // writes straight into the sum, x is added after its dropout, and later
  // branches (parallel layout) share one buffer.
  float* sum = shape.pre_norm ? s.out : s.normed;
  float* spare = nullptr;  // [rows, d]
  int i = 0;
  for (const Branch& branch : branches) {
    if (i > 0 && !spare) spare = ctx.arena.alloc(n);
    float* out = i == 0 ? sum : spare;
    branch(input, out);
    s.drop[i] = drop.forward(ctx, out, n);
    kernels::axpy(1.0f, i == 0 ? x : spare, sum, n);
    ++i;
  }
  if (!shape.pre_norm) s.norm = ln.forward(ctx, s.normed, s.out, rows);
  return s.out;
}

// Accumulates dx from dout; the branches in the order of the forward.
void residual_backward(StepContext& ctx, const LayerShape& shape, const LayerNorm& ln, const Dropout& drop,
                       const ResidualSaved& s, std::int64_t rows, const float* dout, float* dx,
                       std::initializer_list<BranchBackward> branches) {
  const std::int64_t n = rows * shape.d;
  const float* dsum = dout;  // ∂L/∂(x + Σ branches)
  if (!shape.pre_norm) {
    float* d = ctx.arena.alloc_zeroed(n);
    ln.backward(ctx, s.norm, dout, d);
    dsum = d;
  }
  kernels::axpy(1.0f, dsum, dx, n);
  float* dinput = shape.pre_norm ? ctx.arena.alloc_zeroed(n) : dx;
  float* dbranch = ctx.arena.alloc(n);
  int i = 0;
  for (const BranchBackward& branch_backward : branches) {
    drop.backward(s.drop[i], dsum, dbranch);
    branch_backward(dbranch, dinput);
    ++i;
  }
  if (shape.pre_norm) ln.backward(ctx, s.norm, dinput, dx);
}

MixerSpec with_causal(MixerSpec spec, bool causal) {
  spec.causal = causal;
  return spec;
}

}  // namespace

void EncoderLayer::declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape,
                           const MixerSpec& mixer) {
  shape = layer_shape;
  self_attn = make_mixer(params, name + ".self_attn", with_causal(mixer, false));
  ln_attn.declare(params, shape.parallel ? name + ".ln" : name + ".ln_attn", shape.d);
  ffn.declare(params, name + ".ffn", shape.d, shape.ffn_dim);
  if (!shape.parallel) ln_ffn.declare(params, name + ".ln_ffn", shape.d);
  ffn.activation_dropout.p = shape.activation_dropout;
  dropout.p = shape.dropout;
}

float* EncoderLayer::forward(StepContext& ctx, const float* x, std::int64_t batch, std::int64_t t,
                             const std::int32_t* lengths, Saved& s) const {
  const std::int64_t rows = batch * t;
  s.rows = rows;
  const auto mixer = [&](const float* in, float* out) { self_attn->forward(ctx, in, out, batch, t, lengths, s.attn); };
  const auto ffn_branch = [&](const float* in, float* out) { s.ffn = ffn.forward(ctx, in, out, rows); };
  if (shape.parallel) return residual_forward(ctx, shape, ln_attn, dropout, x, rows, s.attn_block, {mixer, ffn_branch});
  const float* h = residual_forward(ctx, shape, ln_attn, dropout, x, rows, s.attn_block, {mixer});
  return residual_forward(ctx, shape, ln_ffn, dropout, h, rows, s.ffn_block, {ffn_branch});
}

void EncoderLayer::backward(StepContext& ctx, const Saved& s, const float* dout, float* dx) const {
  const std::int64_t rows = s.rows;
  const auto mixer = [&](const float* dbranch, float* din) { self_attn->backward(ctx, *s.attn, dbranch, din); };
  const auto ffn_branch = [&](const float* dbranch, float* din) { ffn.backward(ctx, s.ffn, dbranch, din); };
  if (shape.parallel) {
    residual_backward(ctx, shape, ln_attn, dropout, s.attn_block, rows, dout, dx, {mixer, ffn_branch});
    return;
  }
  float* dh = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_ffn, dropout, s.ffn_block, rows, dout, dh, {ffn_branch});
  residual_backward(ctx, shape, ln_attn, dropout, s.attn_block, rows, dh, dx, {mixer});
}

void DecoderLayer::declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape,
                           const MixerSpec& mixer) {
  shape = layer_shape;
  self_attn = make_mixer(params, name + ".self_attn", with_causal(mixer, true));
  ln_self.declare(params, shape.parallel ? name + ".ln" : name + ".ln_self", shape.d);
  cross_attn.declare_cross(params, name + ".cross_attn", shape.d, shape.heads);
  cross_attn.attention_dropout = mixer.attention_dropout;
  if (!shape.parallel) ln_cross.declare(params, name + ".ln_cross", shape.d);
  ffn.declare(params, name + ".ffn", shape.d, shape.ffn_dim);
  if (!shape.parallel) ln_ffn.declare(params, name + ".ln_ffn", shape.d);
  ffn.activation_dropout.p = shape.activation_dropout;
  dropout.p = shape.dropout;
}

float* DecoderLayer::forward(StepContext& ctx, const float* x, const float* memory, std::int64_t batch, std::int64_t tt,
                             std::int64_t ts, const std::int32_t* tgt_lengths, const std::int32_t* src_lengths,
                             Saved& s) const {
  const std::int64_t rows = batch * tt;
  s.rows = rows;
  const auto self = [&](const float* in, float* out) {
    self_attn->forward(ctx, in, out, batch, tt, tgt_lengths, s.self);
  };
  const auto cross = [&](const float* in, float* out) {
    s.cross = cross_attn.forward_cross(ctx, in, memory, out, batch, tt, ts, tgt_lengths, src_lengths);
  };
  const auto ffn_branch = [&](const float* in, float* out) { s.ffn = ffn.forward(ctx, in, out, rows); };
  if (shape.parallel)
    return residual_forward(ctx, shape, ln_self, dropout, x, rows, s.self_block, {self, cross, ffn_branch});
  const float* h1 = residual_forward(ctx, shape, ln_self, dropout, x, rows, s.self_block, {self});
  const float* h2 = residual_forward(ctx, shape, ln_cross, dropout, h1, rows, s.cross_block, {cross});
  return residual_forward(ctx, shape, ln_ffn, dropout, h2, rows, s.ffn_block, {ffn_branch});
}

void DecoderLayer::backward(StepContext& ctx, const Saved& s, const float* dout, float* dx, float* dmemory) const {
  const std::int64_t rows = s.rows;
  const auto self = [&](const float* dbranch, float* din) { self_attn->backward(ctx, *s.self, dbranch, din); };
  const auto cross = [&](const float* dbranch, float* din) {
    cross_attn.backward(ctx, s.cross, dbranch, din, dmemory);
  };
  const auto ffn_branch = [&](const float* dbranch, float* din) { ffn.backward(ctx, s.ffn, dbranch, din); };
  if (shape.parallel) {
    residual_backward(ctx, shape, ln_self, dropout, s.self_block, rows, dout, dx, {self, cross, ffn_branch});
    return;
  }
  float* dh2 = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_ffn, dropout, s.ffn_block, rows, dout, dh2, {ffn_branch});
  float* dh1 = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_cross, dropout, s.cross_block, rows, dh2, dh1, {cross});
  residual_backward(ctx, shape, ln_self, dropout, s.self_block, rows, dh1, dx, {self});
}

void DecoderLayer::start_self(StepContext& ctx, std::int64_t sentences, std::int64_t beams,
                              DecoderLayerCache& cache) const {
  cache.self_width = self_attn->cache_width();
  // Not zeroed (token_mixer.h; the incremental tests poison the arena with NaN):
  // zeroing [N, t_max, width] per batch, mostly rows no hypothesis reaches, was
  // 5% of int8 beam search (perf, test2016, batch 64).
  cache.self_cache = ctx.arena.alloc(sentences * beams * cache.t_max * cache.self_width);
}

void DecoderLayer::start_cross(StepContext& ctx, const float* memory, std::int64_t sentences,
                               DecoderLayerCache& cache) const {
  cache.cross_kv = ctx.arena.alloc(sentences * cache.src_len * 2 * shape.d);
  cross_attn.project_memory(ctx.params, memory, cache.cross_kv, sentences * cache.src_len);
}

float* DecoderLayer::step(StepContext& ctx, const float* x, std::int64_t sentences, std::int64_t beams, std::int64_t t,
                          const std::int32_t* src_lengths, DecoderLayerCache& cache) const {
  const std::int64_t n = sentences * beams;
  ResidualSaved unused;
  const auto self = [&](const float* in, float* out) {
    self_attn->step(ctx, in, out, n, t, cache.self_cache, cache.t_max);
  };
  const auto cross = [&](const float* in, float* out) {
    cross_attn.step_cross(ctx, in, out, sentences, beams, cache.cross_kv, cache.src_len, src_lengths);
  };
  const auto ffn_branch = [&](const float* in, float* out) { ffn.forward(ctx, in, out, n); };
  if (shape.parallel) return residual_forward(ctx, shape, ln_self, dropout, x, n, unused, {self, cross, ffn_branch});
  const float* h1 = residual_forward(ctx, shape, ln_self, dropout, x, n, unused, {self});
  const float* h2 = residual_forward(ctx, shape, ln_cross, dropout, h1, n, unused, {cross});
  return residual_forward(ctx, shape, ln_ffn, dropout, h2, n, unused, {ffn_branch});
}

}  // namespace attn::nn
