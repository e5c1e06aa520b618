#include "attn/nn/attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/core/scratch.h"
#include "attn/kernels/dropout.h"
#include "attn/kernels/products.h"
#include "attn/kernels/softmax.h"

namespace attn::nn {

using kernels::Trans;

namespace {

// Rows of valid keys for each query of one (sequence, head): causal rows see
// keys up to themselves, others all k_len keys.
void valid_keys(std::int32_t* valid, std::int64_t lq, std::int64_t lk, bool causal) {
  for (std::int64_t i = 0; i < lq; ++i)
    valid[i] = static_cast<std::int32_t>(causal ? std::min<std::int64_t>(lk, i + 1) : lk);
}

}  // namespace

void WeightDropout::draw(std::int64_t r, const float* x, float* y) const {
  const std::uint64_t blocks = static_cast<std::uint64_t>((width + 3) / 4);
  kernels::dropout_forward(x, y, keep + r * width, width, p, seed, counter + static_cast<std::uint64_t>(r) * blocks);
}

void WeightDropout::apply(std::int64_t r, const float* x, float* y, std::int64_t n, std::int64_t first) const {
  kernels::dropout_backward_write(x, keep + r * width + first, y, n, p);
}

WeightDropout weight_dropout(StepContext& ctx, float p, std::int64_t rows, std::int64_t width) {
  if (!ctx.training || !(p > 0.0f) || rows <= 0 || width <= 0) return {};
  WeightDropout drop;
  drop.p = p;
  drop.width = width;
  // A byte per weight, carved from the float arena.
  drop.keep = reinterpret_cast<std::uint8_t*>(ctx.arena.alloc((rows * width + 3) / 4));
  drop.seed = ctx.rng.seed();
  drop.counter = ctx.rng.reserve_blocks(static_cast<std::uint64_t>(rows * ((width + 3) / 4)));
  return drop;
}

void attention_forward(const AttentionDims& dims, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                       const std::int32_t* q_len, const std::int32_t* k_len, bool causal, const WeightDropout& drop,
                       kernels::ComputeType type) {
  const std::int64_t B = dims.batch, H = dims.heads, dh = dims.head_dim, Tq = dims.tq, Tk = dims.tk;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    const std::span<std::int32_t> valid = thread_scratch<std::int32_t>(static_cast<std::size_t>(Tq));
    // [lq, Tk]: probs ⊙ keep / (1 − p)
    const std::span<float> dropped = thread_scratch<float>(static_cast<std::size_t>(drop.active() ? Tq * Tk : 0));
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t lq = std::min<std::int64_t>(q_len[b], Tq), lk = std::min<std::int64_t>(k_len[b], Tk);
        float* p = probs + (b * H + h) * Tq * Tk;  // [Tq, Tk]
        float* o = out.at(b, 0) + h * dh;
        std::memset(p, 0, sizeof(float) * Tq * Tk);
        if (lk > 0 && lq > 0) {
          kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, q.at(b, 0) + h * dh, q.row_stride,
                        k.at(b, 0) + h * dh, k.row_stride, 0.0f, p, Tk);
          valid_keys(valid.data(), lq, lk, causal);
          kernels::softmax_forward(p, p, lq, Tk, valid.data(), scale);
          const float* weights = p;
          if (drop.active()) {
            for (std::int64_t i = 0; i < lq; ++i) drop.draw((b * H + h) * Tq + i, p + i * Tk, &dropped[i * Tk]);
            weights = dropped.data();
          }
          kernels::gemm(type, Trans::N, Trans::N, lq, dh, lk, 1.0f, weights, Tk, v.at(b, 0) + h * dh, v.row_stride,
                        0.0f, o, out.row_stride);
        }
        for (std::int64_t t = (lk > 0 ? lq : 0); t < Tq; ++t)
          std::memset(o + t * out.row_stride, 0, sizeof(float) * dh);
      }
    }
  }
}

void attention_backward(const AttentionDims& dims, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                        HeadsView dout, HeadsView dq, HeadsView dk, HeadsView dv, const std::int32_t* q_len,
                        const std::int32_t* k_len, bool causal, const WeightDropout& drop, kernels::ComputeType type) {
  const std::int64_t B = dims.batch, H = dims.heads, dh = dims.head_dim, Tq = dims.tq, Tk = dims.tk;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    const std::span<std::int32_t> valid = thread_scratch<std::int32_t>(static_cast<std::size_t>(Tq));
    // [lq, Tk]: ∂L/∂probs, then ∂L/∂scores
    const std::span<float> dp = thread_scratch<float>(static_cast<std::size_t>(Tq * Tk));
    // [lq, Tk]: the forward's dropped probs, again
    const std::span<float> dropped = thread_scratch<float>(static_cast<std::size_t>(drop.active() ? Tq * Tk : 0), 1);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t lq = std::min<std::int64_t>(q_len[b], Tq), lk = std::min<std::int64_t>(k_len[b], Tk);
        if (lq == 0 || lk == 0) continue;
        const float* p = probs + (b * H + h) * Tq * Tk;
        const float* go = dout.at(b, 0) + h * dh;
        const std::int64_t col = h * dh;
        // dP = dO · Vᵀ; dV += Pᵀ · dO. With dropout, P̃ (the weights the forward applied) takes P's place
        // here, and dP = dP̃ ⊙ keep / (1 − p) then.
        const float* weights = p;
        if (drop.active()) {
          for (std::int64_t i = 0; i < lq; ++i) drop.apply((b * H + h) * Tq + i, p + i * Tk, &dropped[i * Tk], lk);
          weights = dropped.data();
        }
        kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, go, dout.row_stride, v.at(b, 0) + col, v.row_stride,
                      0.0f, dp.data(), Tk);
        kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, weights, Tk, go, dout.row_stride, 1.0f,
                      dv.at(b, 0) + col, dv.row_stride);
        if (drop.active())
          for (std::int64_t i = 0; i < lq; ++i) drop.apply((b * H + h) * Tq + i, &dp[i * Tk], &dp[i * Tk], lk);
        valid_keys(valid.data(), lq, lk, causal);
        kernels::softmax_backward(p, dp.data(), dp.data(), lq, Tk, valid.data(), scale);
        // dQ += dS · K; dK += dSᵀ · Q
        kernels::gemm(type, Trans::N, Trans::N, lq, dh, lk, 1.0f, dp.data(), Tk, k.at(b, 0) + col, k.row_stride, 1.0f,
                      dq.at(b, 0) + col, dq.row_stride);
        kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, dp.data(), Tk, q.at(b, 0) + col, q.row_stride, 1.0f,
                      dk.at(b, 0) + col, dk.row_stride);
      }
    }
  }
}

namespace {
// The q, k, v parameters; returns q's weight and bias (k's and v's ids follow them).
Linear declare_qkv_parameters(ParamStore& params, const std::string& name, std::int64_t d) {
  const char* names[3] = {".q", ".k", ".v"};
  ParamId weights[3], biases[3];
  for (int i = 0; i < 3; ++i) weights[i] = params.add(name + names[i] + ".weight", {d, d}, Init::xavier_uniform);
  for (int i = 0; i < 3; ++i) biases[i] = params.add(name + names[i] + ".bias", {d}, Init::zeros, 0.0f, false);
  return Linear{weights[0], biases[0], d, d, {}};
}
}  // namespace

Linear declare_qkv(ParamStore& params, const std::string& name, std::int64_t d) {
  const Linear first = declare_qkv_parameters(params, name, d);
  return Linear::over(params, first.weight, first.bias, d, 3 * d);
}

void MultiHeadAttention::declare(ParamStore& params, const std::string& name, std::int64_t dim,
                                 std::int64_t num_heads) {
  declare_projections(params, name, dim, num_heads);
  o.declare(params, name + ".o", d, d);
}

void MultiHeadAttention::declare_projections(ParamStore& params, const std::string& name, std::int64_t dim,
                                             std::int64_t num_heads) {
  d = dim;
  heads = num_heads;
  qkv = declare_qkv(params, name, d);
}

void MultiHeadAttention::declare_cross(ParamStore& params, const std::string& name, std::int64_t dim,
                                       std::int64_t num_heads) {
  d = dim;
  heads = num_heads;
  const Linear first = declare_qkv_parameters(params, name, d);
  q = Linear::over(params, first.weight, first.bias, d, d);
  kv = Linear::over(params, first.weight + 1, first.bias + 1, d, 2 * d);
  o.declare(params, name + ".o", d, d);
}

MultiHeadAttention::Saved MultiHeadAttention::forward_self(StepContext& ctx, const float* x, float* y,
                                                           std::int64_t batch, std::int64_t t,
                                                           const std::int32_t* lengths, bool causal) const {
  Saved s = attend_self(ctx, x, ctx.arena.alloc(batch * t * d), d, batch, t, lengths, causal);
  o.forward(ctx.params, s.context, y, batch * t);
  return s;
}

MultiHeadAttention::Saved MultiHeadAttention::attend_self(StepContext& ctx, const float* x, float* context,
                                                          std::int64_t ld, std::int64_t batch, std::int64_t t,
                                                          const std::int32_t* lengths, bool causal) const {
  Saved s;
  s.x = x;
  s.dims = {batch, heads, d / heads, t, t};
  s.q_len = s.k_len = lengths;
  s.causal = causal;
  const std::int64_t rows = batch * t, stride = 3 * d;
  s.qkv = ctx.arena.alloc(rows * stride);
  qkv.forward(ctx.params, x, s.qkv, rows);
  s.probs = ctx.arena.alloc(batch * heads * t * t);
  s.context = context;
  s.drop = weight_dropout(ctx, attention_dropout, batch * heads * t, t);
  attention_forward(s.dims, {s.qkv, stride, t * stride}, {s.qkv + d, stride, t * stride},
                    {s.qkv + 2 * d, stride, t * stride}, {context, ld, t * ld}, s.probs, lengths, lengths, causal,
                    s.drop, ctx.params.activation_compute_type());
  return s;
}

float* MultiHeadAttention::attend_self_backward(StepContext& ctx, const Saved& s, const float* dcontext,
                                                std::int64_t ld) const {
  const std::int64_t tq = s.dims.tq, stride = 3 * d;
  float* dqkv = ctx.arena.alloc_zeroed(s.dims.batch * tq * stride);  // [B·T, 3d]
  float* dctx = const_cast<float*>(dcontext);  // HeadsView is shared by readers and writers; not written here
  attention_backward(s.dims, {s.qkv, stride, tq * stride}, {s.qkv + d, stride, tq * stride},
                     {s.qkv + 2 * d, stride, tq * stride}, s.probs, {dctx, ld, tq * ld}, {dqkv, stride, tq * stride},
                     {dqkv + d, stride, tq * stride}, {dqkv + 2 * d, stride, tq * stride}, s.q_len, s.k_len, s.causal,
                     s.drop, ctx.params.activation_compute_type());
  return dqkv;
}

MultiHeadAttention::Saved MultiHeadAttention::forward_cross(StepContext& ctx, const float* x, const float* memory,
                                                            float* y, std::int64_t batch, std::int64_t tq,
                                                            std::int64_t tk, const std::int32_t* q_len,
                                                            const std::int32_t* k_len) const {
  Saved s;
  s.x = x;
  s.memory = memory;
  s.dims = {batch, heads, d / heads, tq, tk};
  s.q_len = q_len;
  s.k_len = k_len;
  s.qkv = ctx.arena.alloc(batch * tq * d + batch * tk * 2 * d);
  float* kvp = s.qkv + batch * tq * d;
  q.forward(ctx.params, x, s.qkv, batch * tq);
  kv.forward(ctx.params, memory, kvp, batch * tk);
  s.probs = ctx.arena.alloc(batch * heads * tq * tk);
  s.context = ctx.arena.alloc(batch * tq * d);
  s.drop = weight_dropout(ctx, attention_dropout, batch * heads * tq, tk);
  attention_forward(s.dims, {s.qkv, d, tq * d}, {kvp, 2 * d, tk * 2 * d}, {kvp + d, 2 * d, tk * 2 * d},
                    {s.context, d, tq * d}, s.probs, q_len, k_len, false, s.drop, ctx.params.activation_compute_type());
  o.forward(ctx.params, s.context, y, batch * tq);
  return s;
}

void MultiHeadAttention::backward(StepContext& ctx, const Saved& s, const float* dy, float* dx, float* dmemory) const {
  const std::int64_t B = s.dims.batch, tq = s.dims.tq, tk = s.dims.tk;
  float* dcontext = ctx.arena.alloc_zeroed(B * tq * d);
  o.backward(ctx.params, s.context, dy, dcontext, B * tq);
  HeadsView gout{dcontext, d, tq * d};
  if (!s.memory) {
    qkv.backward(ctx.params, s.x, attend_self_backward(ctx, s, dcontext, d), dx, B * tq);
  } else {
    float* kvp = s.qkv + B * tq * d;
    float* dq = ctx.arena.alloc_zeroed(B * tq * d);
    float* dkv = ctx.arena.alloc_zeroed(B * tk * 2 * d);
    attention_backward(s.dims, {s.qkv, d, tq * d}, {kvp, 2 * d, tk * 2 * d}, {kvp + d, 2 * d, tk * 2 * d}, s.probs,
                       gout, {dq, d, tq * d}, {dkv, 2 * d, tk * 2 * d}, {dkv + d, 2 * d, tk * 2 * d}, s.q_len, s.k_len,
                       false, s.drop, ctx.params.activation_compute_type());
    q.backward(ctx.params, s.x, dq, dx, B * tq);
    kv.backward(ctx.params, s.memory, dkv, dmemory, B * tk);
  }
}

void MultiHeadAttention::step_self(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t,
                                   float* cache, std::int64_t t_max) const {
  float* context = ctx.arena.alloc(n * d);
  attend_step(ctx, x, n, t, cache, 2 * d, t_max, context, d);
  o.forward(ctx.params, context, y, n);
}

float* MultiHeadAttention::attend_step(StepContext& ctx, const float* x, std::int64_t n, std::int64_t t, float* cache,
                                       std::int64_t cw, std::int64_t t_max, float* context, std::int64_t ld) const {
  float* proj = ctx.arena.alloc(n * 3 * d);  // [N, 3d]
  qkv.forward(ctx.params, x, proj, n);
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(cache + (i * t_max + t) * cw, proj + i * 3 * d + d, sizeof(float) * 2 * d);
  std::vector<std::int32_t> q_len(static_cast<std::size_t>(n), 1),
      k_len(static_cast<std::size_t>(n), static_cast<std::int32_t>(t + 1));
  float* probs = ctx.arena.alloc(n * heads * (t + 1));  // [N, H, 1, t+1]
  const AttentionDims dims{n, heads, d / heads, 1, t + 1};
  attention_forward(dims, {proj, 3 * d, 3 * d}, {cache, cw, t_max * cw}, {cache + d, cw, t_max * cw}, {context, ld, ld},
                    probs, q_len.data(), k_len.data(), false, {}, ctx.params.activation_compute_type());
  return proj;
}

void MultiHeadAttention::step_cross(StepContext& ctx, const float* x, float* y, std::int64_t sentences,
                                    std::int64_t beams, const float* kv, std::int64_t ts,
                                    const std::int32_t* src_lengths) const {
  const std::int64_t n = sentences * beams;
  float* query = ctx.arena.alloc(n * d);  // [S, beams, d]
  q.forward(ctx.params, x, query, n);
  const std::vector<std::int32_t> q_len(static_cast<std::size_t>(sentences), static_cast<std::int32_t>(beams));
  float* context = ctx.arena.alloc(n * d);
  float* probs = ctx.arena.alloc(n * heads * ts);  // [S, H, beams, Ts]
  const AttentionDims dims{sentences, heads, d / heads, beams, ts};
  float* kv_mut = const_cast<float*>(kv);  // HeadsView is shared by readers and writers; not written here
  attention_forward(dims, {query, d, beams * d}, {kv_mut, 2 * d, ts * 2 * d}, {kv_mut + d, 2 * d, ts * 2 * d},
                    {context, d, beams * d}, probs, q_len.data(), src_lengths, false, {},
                    ctx.params.activation_compute_type());
  o.forward(ctx.params, context, y, n);
}

void MultiHeadAttention::project_memory(const ParamStore& params, const float* memory, float* kv_out,
                                        std::int64_t rows) const {
  kv.forward(params, memory, kv_out, rows);
}

MixerMaps maps_from_probs(const float* probs, std::int64_t batch_index, std::int64_t heads, std::int64_t t,
                          std::int64_t length) {
  MixerMaps maps = MixerMaps::zeros(heads, length);
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < length; ++i) {
      const float* row = probs + ((batch_index * heads + h) * t + i) * t;
      std::copy(row, row + length, maps.weights.begin() + (h * length + i) * length);
    }
  return maps;
}

}  // namespace attn::nn
