// DisaMixer's training and evaluation forward and its backward: per
// (sequence, head), the query and key terms, each query's row of the
// T × T × d_h tensors (saved whole for the backward) and the fusion gate,
// between the input and output projections.
#include <algorithm>
#include <cstring>
#include <vector>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/directional/directions.h"
#include "attn/nn/mechanisms/directional/head_math.h"
#include "attn/nn/mechanisms/disa/disa.h"

namespace attn::nn {

using kernels::Trans;

void DisaMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                        const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  const std::int64_t B = batch, T = t, H = heads_, dh = head_dim_, d = d_, rows = B * T;
  Saved* s = &reuse<Saved>(saved);
  s->x = x;
  s->batch = B;
  s->t = T;
  s->lengths = lengths;
  s->v = ctx.arena.alloc(rows * d);
  v_.forward(ctx.params, x, s->v, rows);
  s->query = ctx.arena.alloc(rows * d);
  s->key = ctx.arena.alloc(rows * d);
  // The two T × T × d_h tensors of every (sequence, head): DiSA's cost, held until the backward.
  s->tanh = ctx.arena.alloc(B * H * T * T * dh);
  s->p = ctx.arena.alloc(B * H * T * T * dh);
  s->o = ctx.arena.alloc(rows * d);
  s->gate = ctx.arena.alloc(rows * d);
  s->u = ctx.arena.alloc(rows * d);
  s->drop = weight_dropout(ctx, attention_dropout_, B * H * T, T * dh);
  const bool dropout = s->drop.active();

#pragma omp parallel
  {
    // Kept per thread from call to call (a step allocates nothing), each as a fresh one would be.
    static thread_local std::vector<float> den, p_drop;
    den.assign(static_cast<std::size_t>(dh), 0.0f);
    p_drop.assign(static_cast<std::size_t>(dropout ? T * dh : 0), 0.0f);  // P̃ of one row
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        const std::int64_t at = b * T * d + h * dh;  // first element of this block in the [B·T, d] buffers
        const float* v = s->v + at;                  // [T, dh], row stride d, as all below
        float* query = s->query + at;
        float* key = s->key + at;
        float* o = s->o + at;
        const std::int64_t block = (b * H + h) * T;  // the head's first row (b, h, 0) of the tensors
        float* tanh = s->tanh + block * T * dh;      // [T, T, dh]
        float* p = s->p + block * T * dh;            // [T, T, dh]
        std::memset(tanh, 0, sizeof(float) * T * T * dh);
        std::memset(p, 0, sizeof(float) * T * T * dh);

        head_terms(ctx.params, h, v, d, query, key, len);
        for (std::int64_t i = 0; i < len; ++i) {
          std::int64_t first = 0, end = 0;
          directional::allowed_keys(causal_, H, h, i, len, first, end);
          const std::int64_t n = std::max<std::int64_t>(0, end - first);
          float* p_row = p + i * T * dh;  // [T, dh]
          row_weights(query + i * d, key + first * d, d, n, tanh + i * T * dh + first * dh, p_row + first * dh,
                      den.data());
          const float* weights = p_row + first * dh;
          if (dropout) {  // every real query's row, as multi-head attention draws them
            s->drop.draw(block + i, p_row, p_drop.data());
            weights = p_drop.data() + first * dh;
          }
          mix_row(weights, v + first * d, d, n, o + i * d);
        }
        gate_.forward(ctx.params, h, v, d, o, s->gate + at, s->u + at, len);
        // Padded rows: zeros (backward's per-head parameter products run over them).
        for (std::int64_t i = len; i < T; ++i)
          for (float* buffer : {query, key, o, s->gate + at, s->u + at})
            std::memset(buffer + i * d, 0, sizeof(float) * dh);
      }
    }
  }
  o_.forward(ctx.params, s->u, y, rows);
}

void DisaMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t B = s.batch, T = s.t, H = heads_, dh = head_dim_, d = d_, rows = B * T;
  const Arena::Mark mark = ctx.arena.mark();
  ParamStore& params = ctx.params;

  float* du = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]: ∂L/∂U
  o_.backward(params, s.u, dy, du, rows);
  float* dv = ctx.arena.alloc_zeroed(rows * d);      // [B·T, d]: ∂L/∂v
  float* dz = ctx.arena.alloc(rows * d);             // [B·T, d]: ∂L/∂Z, Z the gate's pre-activation
  float* dquery = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]: ∂L/∂(v W_f1ᵀ)
  float* dkey = ctx.arena.alloc_zeroed(rows * d);    // [B·T, d]: ∂L/∂(v W_f2ᵀ + b_f)
  const bool dropout = s.drop.active();

  // Data gradients, one (sequence, head) per task; what the parameters need
  // (dz, dquery, dkey) is kept, with padded rows 0, for the per-head products below.
#pragma omp parallel
  {
    static thread_local std::vector<float> dout, p_drop;
    dout.assign(static_cast<std::size_t>(T * dh), 0.0f);                  // ∂L/∂O of the head
    p_drop.assign(static_cast<std::size_t>(dropout ? T * dh : 0), 0.0f);  // P̃ of one row
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, T);
        const std::int64_t at = b * T * d + h * dh;
        const float* v = s.v + at;  // [T, dh], row stride d, as all below
        const float* o = s.o + at;
        for (std::int64_t i = len; i < T; ++i) std::memset(dz + at + i * d, 0, sizeof(float) * dh);
        if (len == 0) continue;

        // Fusion gate: dO = dU ⊙ (1 − G) + dZ W_g,o; dv += dU ⊙ G + dZ W_g,v.
        gate_.backward(params, h, v, d, o, s.gate + at, du + at, dz + at, dv + at, dout.data(), len);
        // Each query's row of the tensors: dv, dquery, dkey.
        const std::int64_t block = (b * H + h) * T;
        for (std::int64_t i = 0; i < len; ++i) {
          std::int64_t first = 0, end = 0;
          directional::allowed_keys(causal_, H, h, i, len, first, end);
          const std::int64_t n = end - first;
          if (n <= 0) continue;
          const float* tanh_row = s.tanh + (block + i) * T * dh + first * dh;  // [n, dh]
          const float* p_row = s.p + (block + i) * T * dh + first * dh;        // [n, dh]
          if (dropout) s.drop.apply(block + i, p_row, p_drop.data(), n * dh, first * dh);
          row_weights_backward(tanh_row, p_row, dropout ? p_drop.data() : nullptr, v + first * d, d, o + i * d,
                               &dout[i * dh], n, dv + at + first * d, dquery + at + i * d, dkey + at + first * d, d);
        }
        // The query and key terms, data path: dv += dquery W_f1[h] + dkey W_f2[h].
        kernels::weight_product_backward(params.form(f1_matrices_[h]), len, dquery + at, d, 1.0f, dv + at, d);
        kernels::weight_product_backward(params.form(f2_matrices_[h]), len, dkey + at, d, 1.0f, dv + at, d);
      }
    }
  }

  // Per-head parameters: one head per task, each a product over all B·T rows
  // (padded rows hold zeros), so no two tasks write the same gradient.
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < H; ++h) {
    const std::int64_t col = h * dh;
    gate_.parameter_gradients(params, h, s.v, d, s.o, dz, rows);
    kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dquery + col, d, s.v + col,
                  d, 1.0f, params.grad(f1_weight_) + h * dh * dh, dh);
    kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dkey + col, d, s.v + col, d,
                  1.0f, params.grad(f2_weight_) + h * dh * dh, dh);
    directional::add_column_sums(dkey + col, d, rows, dh, params.grad(f_bias_) + col);
  }

  v_.backward(params, s.x, dv, dx, rows);
  ctx.arena.release(mark);
}

}  // namespace attn::nn
