#include "attn/nn/transformer_layer.h"

#include <cstring>

#include "attn/kernels/elementwise.h"

namespace attn::nn {

namespace {

// out = x + Drop(sublayer(LN(x))) (pre-norm) or LN(x + Drop(sublayer(x))) (post-norm).
// sublayer(const float* in [rows, d], float* out [rows, d]).
template <typename Sublayer>
float* residual_forward(StepContext& ctx, const LayerShape& shape, const LayerNorm& ln, const Dropout& drop,
                        const float* x, std::int64_t rows, ResidualSaved& s, Sublayer&& sublayer) {
  const std::int64_t n = rows * shape.d;
  s.x = x;
  s.branch = ctx.arena.alloc(n);
  s.out = ctx.arena.alloc(n);
  s.normed = ctx.arena.alloc(n);
  if (shape.pre_norm) {
    s.norm = ln.forward(ctx, x, s.normed, rows);
    sublayer(s.normed, s.branch);
    s.drop = drop.forward(ctx, s.branch, n);
    kernels::add(x, s.branch, s.out, n);
  } else {
    sublayer(x, s.branch);
    s.drop = drop.forward(ctx, s.branch, n);
    kernels::add(x, s.branch, s.normed, n);  // the sum, which the LayerNorm reads
    s.norm = ln.forward(ctx, s.normed, s.out, rows);
  }
  return s.out;
}

// Accumulates dx from dout. sublayer_backward(const float* dbranch, float* dinput) accumulates.
template <typename SublayerBackward>
void residual_backward(StepContext& ctx, const LayerShape& shape, const LayerNorm& ln, const Dropout& drop,
                       const ResidualSaved& s, std::int64_t rows, const float* dout, float* dx,
                       SublayerBackward&& sublayer_backward) {
  const std::int64_t n = rows * shape.d;
  float* dbranch = ctx.arena.alloc(n);
  if (shape.pre_norm) {
    kernels::axpy(1.0f, dout, dx, n);
    std::memcpy(dbranch, dout, sizeof(float) * n);
    drop.backward(s.drop, dbranch);
    float* dnormed = ctx.arena.alloc_zeroed(n);
    sublayer_backward(dbranch, dnormed);
    ln.backward(ctx, s.norm, dnormed, dx);
  } else {
    float* dsum = ctx.arena.alloc_zeroed(n);
    ln.backward(ctx, s.norm, dout, dsum);
    kernels::axpy(1.0f, dsum, dx, n);
    std::memcpy(dbranch, dsum, sizeof(float) * n);
    drop.backward(s.drop, dbranch);
    sublayer_backward(dbranch, dx);
  }
}

}  // namespace

void EncoderLayer::declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape) {
  shape = layer_shape;
  self_attn.declare(params, name + ".self_attn", shape.d, shape.heads);
  ln_attn.declare(params, name + ".ln_attn", shape.d);
  ffn.declare(params, name + ".ffn", shape.d, shape.ffn_dim);
  ln_ffn.declare(params, name + ".ln_ffn", shape.d);
  ffn.activation_dropout.p = shape.activation_dropout;
  dropout.p = shape.dropout;
}

float* EncoderLayer::forward(StepContext& ctx, const float* x, std::int64_t batch, std::int64_t t,
                             const std::int32_t* lengths, Saved& s) const {
  const std::int64_t rows = batch * t;
  const float* h = residual_forward(ctx, shape, ln_attn, dropout, x, rows, s.attn_block,
                                    [&](const float* in, float* out) {
                                      s.attn = self_attn.forward_self(ctx, in, out, batch, t, lengths, false);
                                    });
  return residual_forward(ctx, shape, ln_ffn, dropout, h, rows, s.ffn_block,
                          [&](const float* in, float* out) { s.ffn = ffn.forward(ctx, in, out, rows); });
}

void EncoderLayer::backward(StepContext& ctx, const Saved& s, const float* dout, float* dx) const {
  const std::int64_t rows = s.attn.dims.batch * s.attn.dims.tq;
  float* dh = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_ffn, dropout, s.ffn_block, rows, dout, dh,
                    [&](const float* dbranch, float* din) { ffn.backward(ctx, s.ffn, dbranch, din); });
  residual_backward(ctx, shape, ln_attn, dropout, s.attn_block, rows, dh, dx,
                    [&](const float* dbranch, float* din) { self_attn.backward(ctx, s.attn, dbranch, din, nullptr); });
}

void DecoderLayer::declare(ParamStore& params, const std::string& name, const LayerShape& layer_shape) {
  shape = layer_shape;
  self_attn.declare(params, name + ".self_attn", shape.d, shape.heads);
  ln_self.declare(params, name + ".ln_self", shape.d);
  cross_attn.declare(params, name + ".cross_attn", shape.d, shape.heads);
  ln_cross.declare(params, name + ".ln_cross", shape.d);
  ffn.declare(params, name + ".ffn", shape.d, shape.ffn_dim);
  ln_ffn.declare(params, name + ".ln_ffn", shape.d);
  ffn.activation_dropout.p = shape.activation_dropout;
  dropout.p = shape.dropout;
}

float* DecoderLayer::forward(StepContext& ctx, const float* x, const float* memory, std::int64_t batch,
                             std::int64_t tt, std::int64_t ts, const std::int32_t* tgt_lengths,
                             const std::int32_t* src_lengths, Saved& s) const {
  const std::int64_t rows = batch * tt;
  const float* h1 = residual_forward(ctx, shape, ln_self, dropout, x, rows, s.self_block,
                                     [&](const float* in, float* out) {
                                       s.self = self_attn.forward_self(ctx, in, out, batch, tt, tgt_lengths, true);
                                     });
  const float* h2 = residual_forward(ctx, shape, ln_cross, dropout, h1, rows, s.cross_block,
                                     [&](const float* in, float* out) {
                                       s.cross = cross_attn.forward_cross(ctx, in, memory, out, batch, tt, ts,
                                                                          tgt_lengths, src_lengths);
                                     });
  return residual_forward(ctx, shape, ln_ffn, dropout, h2, rows, s.ffn_block,
                          [&](const float* in, float* out) { s.ffn = ffn.forward(ctx, in, out, rows); });
}

void DecoderLayer::backward(StepContext& ctx, const Saved& s, const float* dout, float* dx, float* dmemory) const {
  const std::int64_t rows = s.self.dims.batch * s.self.dims.tq;
  float* dh2 = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_ffn, dropout, s.ffn_block, rows, dout, dh2,
                    [&](const float* dbranch, float* din) { ffn.backward(ctx, s.ffn, dbranch, din); });
  float* dh1 = ctx.arena.alloc_zeroed(rows * shape.d);
  residual_backward(ctx, shape, ln_cross, dropout, s.cross_block, rows, dh2, dh1,
                    [&](const float* dbranch, float* din) {
                      cross_attn.backward(ctx, s.cross, dbranch, din, dmemory);
                    });
  residual_backward(ctx, shape, ln_self, dropout, s.self_block, rows, dh1, dx,
                    [&](const float* dbranch, float* din) { self_attn.backward(ctx, s.self, dbranch, din, nullptr); });
}

void DecoderLayer::start(StepContext& ctx, const float* memory, std::int64_t n, DecoderLayerCache& cache) const {
  cache.cross_kv = ctx.arena.alloc(n * cache.src_len * 2 * shape.d);
  cross_attn.project_memory(ctx.params, memory, cache.cross_kv, n * cache.src_len);
  cache.self_kv = ctx.arena.alloc_zeroed(n * cache.t_max * 2 * shape.d);
}

float* DecoderLayer::step(StepContext& ctx, const float* x, std::int64_t n, std::int64_t t,
                          const std::int32_t* src_lengths, DecoderLayerCache& cache, float* cross_probs) const {
  ResidualSaved unused;
  const float* h1 = residual_forward(ctx, shape, ln_self, dropout, x, n, unused, [&](const float* in, float* out) {
    self_attn.step_self(ctx, in, out, n, t, cache.self_kv, cache.t_max, nullptr);
  });
  const float* h2 = residual_forward(ctx, shape, ln_cross, dropout, h1, n, unused, [&](const float* in, float* out) {
    cross_attn.step_cross(ctx, in, out, n, cache.cross_kv, cache.src_len, src_lengths, cross_probs);
  });
  return residual_forward(ctx, shape, ln_ffn, dropout, h2, n, unused,
                          [&](const float* in, float* out) { ffn.forward(ctx, in, out, n); });
}

}  // namespace attn::nn
