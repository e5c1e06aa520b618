// FastDisaMixer's backward: the forward's steps in reverse, per (sequence,
// head) for the data gradients, then per head for the parameters.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/kernels/products.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "direct_pairs.h"

namespace attn::nn {

using kernels::Trans;

namespace {

// dR = dA ⊙ φ′(R) in place on da: [len, len]; a: [len, lda] the saved weights.
// exp: φ′ = A (the row shift is constant); sigmoid (row_scale non-null): A (1 −
// σ(R)), σ(R) = A · row_scale. A is 0 at disallowed keys, so the mask carries over.
void token2token_backward(const float* a, std::int64_t lda, const float* row_scale, float* da, std::int64_t len) {
  for (std::int64_t i = 0; i < len; ++i) {
    const float* a_row = a + i * lda;
    float* d_row = da + i * len;
    if (!row_scale) {
      for (std::int64_t j = 0; j < len; ++j) d_row[j] *= a_row[j];
    } else {
      const float rs = row_scale[i];
      for (std::int64_t j = 0; j < len; ++j) d_row[j] *= a_row[j] * (1.0f - a_row[j] * rs);
    }
  }
}

}  // namespace

// Pairs the forward computed directly (§ kFactorisedMinDenominator): with z_j = log φ(R_ij) + S_jk
// and O = Σ p_j v_jk, dz_j = dO p_j (v_jk − O) reaches S_jk, and R_ij through log φ′ (1, or 1 − σ).
// Dropout: O = Σ p_j m_j v_jk, so dz_j = dO p_j (m_j v_jk − O) and dv_jk += dO p_j m_j.
void FastDisaMixer::direct_pairs_backward(std::int64_t h, std::int64_t len, const float* q, const float* k,
                                          const float* s_term, const float* v, const float* inv_d, const float* o,
                                          const float* dout, const FactorDropout* drop, float* dv, float* ds, float* da,
                                          std::vector<float>& scratch) const {
  const std::int64_t dh = head_dim_, d = d_, qs = 3 * d_;
  const bool dropout = drop != nullptr;
  for_each_direct_pair(h, len, q, k, s_term, v, inv_d, scratch,
                       [&](std::int64_t i, std::int64_t c, std::int64_t first, std::int64_t n, const float* r,
                           const float* p, float o_ic) {
                         const float g = dout[i * dh + c];
                         if (dropout) o_ic = o[i * d + c];  // the dropped output the forward kept
                         for (std::int64_t j = 0; j < n; ++j) {
                           const std::int64_t key = first + j;
                           const float m = dropout ? fast_disa::pair_mask(*drop, i, key, c) : 1.0f;
                           const float dz = dropout ? g * p[j] * (m * v[key * qs + c] - o_ic)
                                                    : g * p[j] * (v[key * qs + c] - o_ic);
                           dv[key * qs + c] += dropout ? g * p[j] * m : g * p[j];
                           ds[key * d + c] += dz;
                           da[i * len + key] += sigmoid_ ? dz * (1.0f - fast_disa::sigmoid(r[j])) : dz;
                         }
                       });
}

void FastDisaMixer::backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t B = s.batch, T = s.t, H = heads_, dh = head_dim_, d = d_, rows = B * T, qs = 3 * d;
  const Arena::Mark mark = ctx.arena.mark();
  ParamStore& params = ctx.params;

  // Output projection: dU = dy W_o.
  float* du = ctx.arena.alloc_zeroed(rows * d);  // [B·T, d]
  o_.backward(params, s.u, dy, du, rows);

  float* dqkv = ctx.arena.alloc_zeroed(rows * qs);           // [B·T, 3d]: dq | dk | dv
  float* dz = gated_ ? ctx.arena.alloc(rows * d) : nullptr;  // [B·T, d]: ∂L/∂Z, Z the gate's pre-activation
  float* ds = ctx.arena.alloc(rows * d);                     // [B·T, d]: ∂L/∂S
  float* dpre = ctx.arena.alloc(rows * d);                   // [B·T, d]: ∂L/∂(v W_s1ᵀ + b_s1)
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));

  // Data gradients, one (sequence, head) per task; what the parameters need
  // (dz, ds, dpre) is kept, with padded rows 0, for the per-head products below.
  const bool dropout = s.drop_a.active() && s.drop_e.active();
#pragma omp parallel
  {
    // Kept per thread from call to call (a step allocates nothing), each as a fresh one would be.
    static thread_local std::vector<float> scratch, direct, da, dout;
    scratch.clear();
    direct.clear();
    da.clear();
    dout.clear();
    // Room for the longest task (fast_disa_attend_backward: [3T, 2dh] and [T, T]; direct pairs [2T];
    // ∂L/∂A [T, T]; ∂L/∂O [T, dh]), as in the forward: the tasks a thread draws change from step to step.
    scratch.reserve(static_cast<std::size_t>(6 * T * dh + T * T));
    direct.reserve(static_cast<std::size_t>(2 * T));
    da.reserve(static_cast<std::size_t>(T * T));
    dout.reserve(static_cast<std::size_t>(T * dh));
    // Dropout: Ã [len, T] and Ẽ [len, dh] of the task's head, as the forward applied them.
    static thread_local fast_disa::DroppedFactors dropped;
    dropped.reset(dropout, T, dh);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, T);
        const std::int64_t at = b * T * d + h * dh;
        const std::int64_t qat = b * T * qs + h * dh;
        const float* q = s.qkv + qat;  // [T, dh], row stride 3d
        const float* k = q + d;
        const float* v = q + 2 * d;
        float* dq = dqkv + qat;
        float* dk = dq + d;
        float* dv = dq + 2 * d;
        const float* o = s.o + at;  // [T, dh], row stride d, as all below
        const float* e = s.e + at;
        float* dsh = ds + at;
        float* dpreh = dpre + at;
        float* dzh = gated_ ? dz + at : nullptr;
        const float* a = s.t2t + (b * H + h) * T * T;
        const float* row_scale = sigmoid_ ? s.row_scale + (b * H + h) * T : nullptr;
        for (std::int64_t i = len; i < T; ++i)  // padded rows were defined as 0: no gradient
          for (float* buffer : {dsh, dpreh, dzh})
            if (buffer) std::memset(buffer + i * d, 0, sizeof(float) * dh);
        if (len == 0) continue;

        // Fusion gate (docs/mechanisms-spec.md §4.5): dO = dU ⊙ (1 − G) + dZ W_g,o; dv += dU ⊙ G + dZ W_g,v.
        dout.resize(static_cast<std::size_t>(len * dh));  // [len, dh]: ∂L/∂O
        if (gated_)
          gate_.backward(params, h, v, qs, o, s.gate + at, du + at, dzh, dv, dout.data(), len);
        else
          for (std::int64_t i = 0; i < len; ++i) std::memcpy(&dout[i * dh], du + at + i * d, sizeof(float) * dh);

        // Feature-wise softmax (docs/mechanisms-spec.md §4.4): dA, dE (into ds), dv.
        for (std::int64_t j = 0; j < len; ++j) std::memset(dsh + j * d, 0, sizeof(float) * dh);
        da.assign(static_cast<std::size_t>(len * len), 0.0f);  // [len, len]: ∂L/∂A, then ∂L/∂R
        FactorDropout factors;
        if (dropout) {
          const std::int64_t row0 = (b * H + h) * T;
          for (std::int64_t i = 0; i < len; ++i) s.drop_a.apply(row0 + i, a + i * T, &dropped.a[i * T], len);
          for (std::int64_t j = 0; j < len; ++j) s.drop_e.apply(row0 + j, e + j * d, &dropped.e[j * dh], dh);
          factors = dropped.view(s.drop_a, s.drop_e, row0);
        }
        fast_disa_attend_backward(len, len, dh, a, T, e, d, v, qs, o, d, s.inv_d + at, d, dout.data(), dh, da.data(),
                                  len, dsh, d, dv, qs, scratch, dropout ? &factors : nullptr,
                                  params.activation_compute_type());
        // dS = dE ⊙ E: E = exp(S − shift) with the shift held constant (it cancels in O).
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < dh; ++c) dsh[j * d + c] *= e[j * d + c];

        token2token_backward(a, T, row_scale, da.data(), len);
        direct_pairs_backward(h, len, q, k, s.s_term + at, v, s.inv_d + at, o, dout.data(),
                              dropout ? &factors : nullptr, dv, dsh, da.data(), direct);
        // dq += dR k / √d_h; dk += dRᵀ q / √d_h
        kernels::gemm(params.activation_compute_type(), Trans::N, Trans::N, len, dh, len, scale, da.data(), len, k, qs,
                      1.0f, dq, qs);
        kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, len, dh, len, scale, da.data(), len, q, qs,
                      1.0f, dk, qs);

        // Source2token MLP, data path: dpre = (dS W_s2) ⊙ ELU′; dv += dpre W_s1.
        source2token_backward(params, h, s.hidden + at, dsh, dpreh, dv, qs, len);
      }
    }
  }

  // Per-head parameters: one head per task, each a product over all B·T rows
  // (padded rows hold zeros), so no two tasks write the same gradient.
  const float* v = s.qkv + 2 * d;
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < H; ++h) {
    if (gated_) gate_.parameter_gradients(params, h, v, qs, s.o, dz, rows);
    source2token_parameter_gradients(params, h, v, qs, s.hidden, ds, dpre, rows);
  }

  qkv_.backward(params, s.x, dqkv, dx, rows);
  ctx.arena.release(mark);
}

}  // namespace attn::nn
