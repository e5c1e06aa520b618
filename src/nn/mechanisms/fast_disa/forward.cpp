// FastDisaMixer's training and evaluation forward: per (sequence, head),
// source2token, the token2token weights, the feature-wise softmax and the
// fusion gate, between the input and output projections.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "direct_pairs.h"

namespace attn::nn {

using kernels::Trans;

void FastDisaMixer::token2token(kernels::ComputeType type, std::int64_t h, const float* q, const float* k,
                                std::int64_t len, float* a, std::int64_t lda, float* row_scale) const {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  const std::int64_t qs = 3 * d_;
  // R = q kᵀ / √d_h, then A = φ(R) over the allowed keys with the row's max taken out.
  kernels::gemm(type, Trans::N, Trans::T, len, len, head_dim_, scale, q, qs, k, qs, 0.0f, a, lda);
  for (std::int64_t i = 0; i < len; ++i) {
    float* row = a + i * lda;
    std::int64_t first = 0, end = 0;
    allowed_keys(h, i, len, first, end);
    const float top = fast_disa::token2token_row(row, first, end, sigmoid_);
    if (row_scale) row_scale[i] = top;
    std::fill(row, row + first, 0.0f);
    std::fill(row + std::max(first, end), row + len, 0.0f);
  }
}

void FastDisaMixer::forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                            const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const {
  const std::int64_t B = batch, T = t, H = heads_, dh = head_dim_, d = d_, rows = B * T, qs = 3 * d;
  Saved* s = &reuse<Saved>(saved);
  s->x = x;
  s->batch = B;
  s->t = T;
  s->lengths = lengths;
  s->qkv = ctx.arena.alloc(rows * qs);
  qkv_.forward(ctx.params, x, s->qkv, rows);
  s->hidden = ctx.arena.alloc(rows * d);
  s->s_term = ctx.arena.alloc(rows * d);
  s->e = ctx.arena.alloc(rows * d);
  s->t2t = ctx.arena.alloc(B * H * T * T);
  if (sigmoid_) s->row_scale = ctx.arena.alloc(B * H * T);
  s->o = ctx.arena.alloc(rows * d);
  s->inv_d = ctx.arena.alloc(rows * d);
  if (gated_) {
    s->gate = ctx.arena.alloc(rows * d);
    s->u = ctx.arena.alloc(rows * d);
  } else {
    s->u = s->o;
  }
  // Attention dropout: each factor kept with probability √(1 − p).
  const float factor_p = attention_dropout_ > 0.0f ? 1.0f - std::sqrt(1.0f - attention_dropout_) : 0.0f;
  s->drop_a = weight_dropout(ctx, factor_p, B * H * T, T);
  s->drop_e = weight_dropout(ctx, factor_p, B * H * T, dh);
  const bool dropout = s->drop_a.active() && s->drop_e.active();

  // Everything between the two projections, one (sequence, head) per task.
#pragma omp parallel
  {
    // Kept per thread from call to call (a step allocates nothing), each as a fresh one would be.
    static thread_local std::vector<float> scratch, direct, shift;
    scratch.clear();
    direct.clear();
    // Room for the longest task (fast_disa_attend: [2T, 2dh]; a row's direct pairs: [2T]): which
    // tasks a thread draws changes from step to step, and a later step must not grow them.
    scratch.reserve(static_cast<std::size_t>(4 * T * dh));
    direct.reserve(static_cast<std::size_t>(2 * T));
    shift.assign(static_cast<std::size_t>(dh), 0.0f);
    // Dropout: Ã [T, T] and Ẽ [T, dh] of the task's head.
    static thread_local fast_disa::DroppedFactors dropped;
    dropped.reset(dropout, T, dh);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        const std::int64_t at = b * T * d + h * dh;     // first element of this block in the [B·T, d] buffers
        const float* q = s->qkv + b * T * qs + h * dh;  // [T, dh], row stride 3d
        const float* k = q + d;
        const float* v = q + 2 * d;
        float* hidden = s->hidden + at;  // [T, dh], row stride d, as all below
        float* s_term = s->s_term + at;
        float* e = s->e + at;
        float* o = s->o + at;
        float* inv_d = s->inv_d + at;
        float* a = s->t2t + (b * H + h) * T * T;  // [T, T]
        float* row_scale = sigmoid_ ? s->row_scale + (b * H + h) * T : nullptr;
        std::memset(a, 0, sizeof(float) * T * T);
        if (row_scale) std::memset(row_scale, 0, sizeof(float) * T);

        // S (kept for the direct pairs), then E = exp(S − max over valid keys), per feature; the shift
        // cancels in O.
        source2token(ctx.params, h, v, qs, hidden, s_term, len);
        for (std::int64_t j = 0; j < len; ++j) std::memcpy(e + j * d, s_term + j * d, sizeof(float) * dh);
        std::fill(shift.begin(), shift.end(), -std::numeric_limits<float>::infinity());
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < dh; ++c) shift[c] = std::max(shift[c], e[j * d + c]);
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < dh; ++c) e[j * d + c] = std::exp(e[j * d + c] - shift[c]);

        if (len > 0) {
          token2token(ctx.params.activation_compute_type(), h, q, k, len, a, T, row_scale);
          FactorDropout factors;
          if (dropout) {
            const std::int64_t row0 = (b * H + h) * T;  // the head's first row of both masks
            for (std::int64_t i = 0; i < len; ++i) s->drop_a.draw(row0 + i, a + i * T, &dropped.a[i * T]);
            for (std::int64_t j = 0; j < len; ++j) s->drop_e.draw(row0 + j, e + j * d, &dropped.e[j * dh]);
            factors = dropped.view(s->drop_a, s->drop_e, row0);
          }
          fast_disa_attend(len, len, dh, a, T, e, d, v, qs, o, d, inv_d, d, scratch, dropout ? &factors : nullptr,
                           ctx.params.activation_compute_type());
          for_each_direct_pair(h, len, q, k, s_term, v, inv_d, direct,
                               [&](std::int64_t i, std::int64_t c, std::int64_t first, std::int64_t n, const float*,
                                   const float* p, float o_ic) {
                                 if (dropout) {  // O = Σ_j p_j m_j v_j with the factors' masks
                                   o_ic = 0.0f;
                                   for (std::int64_t j = 0; j < n; ++j)
                                     o_ic += p[j] * fast_disa::pair_mask(factors, i, first + j, c) *
                                             v[(first + j) * qs + c];
                                 }
                                 o[i * d + c] = o_ic;
                               });
          if (gated_) gate_.forward(ctx.params, h, v, qs, o, s->gate + at, s->u + at, len);
        }
        // Padded rows: zeros (backward's per-head parameter products run over them).
        for (std::int64_t i = len; i < T; ++i)
          for (float* buffer :
               {hidden, s_term, e, o, inv_d, gated_ ? s->gate + at : nullptr, gated_ ? s->u + at : nullptr})
            if (buffer) std::memset(buffer + i * d, 0, sizeof(float) * dh);
      }
    }
  }
  o_.forward(ctx.params, s->u, y, rows);
}

}  // namespace attn::nn
