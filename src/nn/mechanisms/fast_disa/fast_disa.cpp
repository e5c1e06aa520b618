#include "attn/nn/mechanisms/fast_disa/fast_disa.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/core/error.h"
#include "attn/nn/mechanism.h"
#include "attn/kernels/products.h"
#include "attn/nn/attention.h"

namespace attn::nn {

using kernels::Trans;

namespace {

// Below this the factorised form hands a (query, feature) pair to the direct
// form. D = Σ_j A_ij E_jk with one shift per feature (the max of S over all
// valid keys), so an S spread of ~87 can leave e^(S − shift) = 0 at every key a
// query may see — D = 0 where a key exists. The floor leaves terms lost to
// underflow below FLT_MIN / 2^-64 ≈ 2e-19 of D; it is reached only by spreads
// of log φ(R) + S over ~44, rare enough that the direct path costs nothing.
constexpr float kFactorisedMinDenominator = 0x1p-64f;

float sigmoid(float z) {
  if (z >= 0.0f) return 1.0f / (1.0f + std::exp(-z));
  const float e = std::exp(z);
  return e / (1.0f + e);
}

// log σ(z) = −log(1 + e^−z), without overflow on either side.
float log_sigmoid(float z) { return z >= 0.0f ? -std::log1p(std::exp(-z)) : z - std::log1p(std::exp(z)); }

// exp(z) − 1 rather than expm1: the absolute error (~1e-7) is what reaches the
// next product, and expm1f costs several times more.
float elu(float z) { return z > 0.0f ? z : std::exp(z) - 1.0f; }
// ELU′ from the output y = ELU(z): 1 for z > 0, else e^z = y + 1.
float elu_grad_from_output(float y) { return y > 0.0f ? 1.0f : y + 1.0f; }

// R_j = q · k_j / √d_h for n keys; k: [n, d_h] with row stride ldk.
void t2t_logits(const float* q, const float* k, std::int64_t ldk, std::int64_t dh, float scale, std::int64_t n,
                float* r) {
  for (std::int64_t j = 0; j < n; ++j) {
    float dot = 0.0f;
    for (std::int64_t c = 0; c < dh; ++c) dot += q[c] * k[j * ldk + c];
    r[j] = dot * scale;
  }
}

// One (query, feature) pair's softmax over its n keys taken directly, with its
// own max: p_j = softmax_j(log φ(R_j) + S_j). r: [n] logits R; s, v: [n] the
// pair's column of S and v (strides lds, ldv). Fills p: [n], returns Σ p_j v_j.
float direct_feature_softmax(const float* r, const float* s, std::int64_t lds, const float* v, std::int64_t ldv,
                             std::int64_t n, bool use_sigmoid, float* p) {
  float z_max = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < n; ++j) {
    p[j] = (use_sigmoid ? log_sigmoid(r[j]) : r[j]) + s[j * lds];
    z_max = std::max(z_max, p[j]);
  }
  float den = 0.0f, num = 0.0f;
  for (std::int64_t j = 0; j < n; ++j) {
    p[j] = std::exp(p[j] - z_max);
    den += p[j];
    num += p[j] * v[j * ldv];
  }
  const float inv = 1.0f / den;  // den ≥ 1: the max term is e^0
  for (std::int64_t j = 0; j < n; ++j) p[j] *= inv;
  return num * inv;
}

// Token2token weights of one row of logits, in place over keys [first, end):
// exp(R − max R), or σ(R) / max σ(R) — exact, as O is invariant to a row's
// scale, and then the largest weight is 1 whatever the logits. Returns max σ(R)
// for sigmoid (backward recovers σ(R) = A · it), else 0.
float token2token_row(float* row, std::int64_t first, std::int64_t end, bool use_sigmoid) {
  if (first >= end) return 0.0f;
  float r_max = row[first];
  for (std::int64_t j = first + 1; j < end; ++j) r_max = std::max(r_max, row[j]);
  if (!use_sigmoid) {
    for (std::int64_t j = first; j < end; ++j) row[j] = std::exp(row[j] - r_max);
    return 0.0f;
  }
  const float top = sigmoid(r_max);
  if (r_max >= -60.0f) {  // σ(r_max) ≥ 1e-26: a σ(R) that underflows is a weight below 1e-12
    const float inv_top = 1.0f / top;
    for (std::int64_t j = first; j < end; ++j) row[j] = sigmoid(row[j]) * inv_top;
  } else {  // every logit very negative: divide in the log domain
    const float log_top = log_sigmoid(r_max);
    for (std::int64_t j = first; j < end; ++j) row[j] = std::exp(log_sigmoid(row[j]) - log_top);
  }
  return top;
}

// m = r_A,ij r_E,jk / (1 − p): what attention dropout leaves of the term of key j
// in the pair (query i, feature k).
float pair_mask(const FactorDropout& drop, std::int64_t i, std::int64_t j, std::int64_t k) {
  return (drop.keep_a[i * drop.ldka + j] ? drop.scale : 0.0f) * (drop.keep_e[j * drop.ldke + k] ? drop.scale : 0.0f);
}

}  // namespace

// ---------------------------------------------------------------------------
// One head's feature-wise softmax, factorised (§3.1, §4.4)

void fast_disa_attend(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                      const float* e, std::int64_t lde, const float* v, std::int64_t ldv, float* o, std::int64_t ldo,
                      float* inv_d, std::int64_t ldi, std::vector<float>& scratch, const FactorDropout* drop,
                      kernels::ComputeType type) {
  if (lq <= 0) return;
  const std::int64_t w = 2 * dh;
  const std::size_t need = static_cast<std::size_t>((lk + lq) * w);
  if (scratch.size() < need) scratch.resize(need);
  float* ev = scratch.data();  // [lk, 2dh]: E | v ⊙ E (dropout: v ⊙ Ẽ)
  float* dn = ev + lk * w;     // [lq, 2dh]: D = A E | N = A (v ⊙ E) (dropout: Ã (v ⊙ Ẽ))
  const float* e_num = drop ? drop->e : e;  // the E of the numerator
  const std::int64_t lde_num = drop ? drop->lde : lde;
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      ev[j * w + c] = e[j * lde + c];
      ev[j * w + dh + c] = v[j * ldv + c] * e_num[j * lde_num + c];
    }
  if (!drop) {
    // Both products in one GEMM: the [T×T]·[T×2d_h] that replaces the T×T×d_h tensor.
    kernels::gemm(type, Trans::N, Trans::N, lq, w, lk, 1.0f, a, lda, ev, w, 0.0f, dn, w);
  } else {  // the numerator's A is dropped, the denominator's not: two products
    kernels::gemm(type, Trans::N, Trans::N, lq, dh, lk, 1.0f, a, lda, ev, w, 0.0f, dn, w);
    kernels::gemm(type, Trans::N, Trans::N, lq, dh, lk, 1.0f, drop->a, drop->lda, ev + dh, w, 0.0f, dn + dh, w);
  }
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float den = dn[i * w + c], num = dn[i * w + dh + c];
      const float inv = den >= kFactorisedMinDenominator ? 1.0f / den : 0.0f;  // no key: O = 0, not 0/0
      inv_d[i * ldi + c] = inv;
      o[i * ldo + c] = num * inv;
    }
}

void fast_disa_attend_backward(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                               const float* e, std::int64_t lde, const float* v, std::int64_t ldv, const float* o,
                               std::int64_t ldo, const float* inv_d, std::int64_t ldi, const float* dout,
                               std::int64_t lddo, float* da, std::int64_t ldda, float* de, std::int64_t ldde,
                               float* dv, std::int64_t lddv, std::vector<float>& scratch, const FactorDropout* drop,
                               kernels::ComputeType type) {
  if (lq <= 0 || lk <= 0) return;
  const std::int64_t w = 2 * dh;
  const std::size_t need = static_cast<std::size_t>((lq + 2 * lk) * w + (drop ? lq * lk : 0));
  if (scratch.size() < need) scratch.resize(need);
  float* gam = scratch.data();  // [lq, 2dh]: Γ | −Γ ⊙ O, with Γ = dO ⊘ D (0 where there is no key)
  float* vee = gam + lq * w;    // [lk, 2dh]: v ⊙ E | E
  float* atg = vee + lk * w;    // [lk, 2dh]: Aᵀ Γ | −Aᵀ (Γ ⊙ O) (dropout: Ãᵀ Γ | −Aᵀ (Γ ⊙ O))
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float g = dout[i * lddo + c] * inv_d[i * ldi + c];
      gam[i * w + c] = g;
      gam[i * w + dh + c] = -g * o[i * ldo + c];
    }
  const float* e_num = drop ? drop->e : e;  // the E of the numerator
  const std::int64_t lde_num = drop ? drop->lde : lde;
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      vee[j * w + c] = v[j * ldv + c] * e_num[j * lde_num + c];
      vee[j * w + dh + c] = e[j * lde + c];
    }
  if (!drop) {
    // dA += Γ (v ⊙ E)ᵀ − (Γ ⊙ O) Eᵀ: one product with k = 2d_h.
    kernels::gemm(type, Trans::N, Trans::T, lq, lk, w, 1.0f, gam, w, vee, w, 1.0f, da, ldda);
    // Aᵀ [Γ | −Γ ⊙ O], then dE += v ⊙ AᵀΓ − Aᵀ(Γ ⊙ O) and dv += E ⊙ AᵀΓ.
    kernels::gemm(type, Trans::T, Trans::N, lk, w, lq, 1.0f, a, lda, gam, w, 0.0f, atg, w);
    for (std::int64_t j = 0; j < lk; ++j)
      for (std::int64_t c = 0; c < dh; ++c) {
        const float at_gamma = atg[j * w + c];
        de[j * ldde + c] += v[j * ldv + c] * at_gamma + atg[j * w + dh + c];
        dv[j * lddv + c] += e[j * lde + c] * at_gamma;
      }
    return;
  }
  // Dropout (§4.4): dA += [Γ (v ⊙ Ẽ)ᵀ] ⊙ r_A/√keep − (Γ ⊙ O) Eᵀ; dE += [v ⊙ (ÃᵀΓ)] ⊙ r_E/√keep − Aᵀ(Γ ⊙ O);
  // dv += Ẽ ⊙ ÃᵀΓ.
  float* numerator = atg + lk * w;  // [lq, lk]: Γ (v ⊙ Ẽ)ᵀ
  kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, gam, w, vee, w, 0.0f, numerator, lk);
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t j = 0; j < lk; ++j)
      if (drop->keep_a[i * drop->ldka + j]) da[i * ldda + j] += numerator[i * lk + j] * drop->scale;
  kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, gam + dh, w, vee + dh, w, 1.0f, da, ldda);
  kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, drop->a, drop->lda, gam, w, 0.0f, atg, w);
  kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, a, lda, gam + dh, w, 0.0f, atg + dh, w);
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float at_gamma = atg[j * w + c];
      const float kept = drop->keep_e[j * drop->ldke + c] ? drop->scale : 0.0f;
      de[j * ldde + c] += v[j * ldv + c] * at_gamma * kept + atg[j * w + dh + c];
      dv[j * lddv + c] += e_num[j * lde_num + c] * at_gamma;
    }
}

// ---------------------------------------------------------------------------
// The mixer

FastDisaMixer::FastDisaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec)
    : d_(spec.d), heads_(spec.heads), causal_(spec.causal), gated_(option_value<bool>(spec, "disa_gate")),
      attention_dropout_(spec.attention_dropout) {
  require(d_ > 0 && heads_ > 0 && d_ % heads_ == 0,
          "--dim " + std::to_string(d_) + " is not divisible by --heads " + std::to_string(heads_) +
              "; choose heads that divide the dimension");
  require(causal_ || heads_ % 2 == 0, "--heads must be even for Fast-DiSA's forward and backward heads (got " +
                                          std::to_string(heads_) + "); choose an even number of heads");
  const auto t2t = option_value<std::string>(spec, "disa_t2t");
  require(t2t == "exp" || t2t == "sigmoid", "--disa-t2t must be 'exp' or 'sigmoid', not '" + t2t + "'");
  sigmoid_ = t2t == "sigmoid";
  head_dim_ = d_ / heads_;
  const std::int64_t H = heads_, dh = head_dim_;
  qkv_ = declare_qkv(params, name, d_);
  o_.declare(params, name + ".o", d_, d_);
  // Per-head weights are 3-D, so Xavier's fans are given explicitly (the store's
  // xavier_uniform reads fans from a 2-D shape).
  const float square_bound = std::sqrt(6.0f / static_cast<float>(2 * dh));
  s1_weight_ = params.add(name + ".s1.weight", {H, dh, dh}, Init::uniform, square_bound);
  s1_bias_ = params.add(name + ".s1.bias", {H, dh}, Init::zeros, 0.0f, false);
  s2_weight_ = params.add(name + ".s2.weight", {H, dh, dh}, Init::uniform, square_bound);
  s2_bias_ = params.add(name + ".s2.bias", {H, dh}, Init::zeros, 0.0f, false);
  if (gated_) {
    gate_weight_ = params.add(name + ".gate.weight", {H, dh, 2 * dh}, Init::uniform,
                              std::sqrt(6.0f / static_cast<float>(3 * dh)));
    gate_bias_ = params.add(name + ".gate.bias", {H, dh}, Init::zeros, 0.0f, false);
  }
  for (std::int64_t h = 0; h < H; ++h) {
    s1_matrices_.push_back(params.add_weight_matrix({s1_weight_, dh, dh, dh, h * dh * dh}));
    s2_matrices_.push_back(params.add_weight_matrix({s2_weight_, dh, dh, dh, h * dh * dh}));
    if (!gated_) continue;
    gate_v_matrices_.push_back(params.add_weight_matrix({gate_weight_, dh, dh, 2 * dh, h * dh * 2 * dh}));
    gate_o_matrices_.push_back(params.add_weight_matrix({gate_weight_, dh, dh, 2 * dh, h * dh * 2 * dh + dh}));
  }
}

void FastDisaMixer::allowed_keys(std::int64_t h, std::int64_t i, std::int64_t len, std::int64_t& first,
                                 std::int64_t& end) const {
  if (causal_) {  // our decoder extension: every head forward, diagonal on
    first = 0;
    end = std::min(i + 1, len);
  } else if (h < heads_ / 2) {  // forward head: earlier keys only
    first = 0;
    end = std::min(i, len);
  } else {  // backward head: later keys only
    first = i + 1;
    end = std::max(first, len);
  }
}

template <class Visit>
void FastDisaMixer::for_each_direct_pair(std::int64_t h, std::int64_t len, const float* q, const float* k,
                                         const float* s, const float* v, const float* inv_d,
                                         std::vector<float>& scratch, Visit&& visit) const {
  const std::int64_t dh = head_dim_, d = d_, qs = 3 * d_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (std::int64_t i = 0; i < len; ++i) {
    std::int64_t first = 0, end = 0;
    allowed_keys(h, i, len, first, end);
    const float* inv = inv_d + i * d;
    if (first >= end || std::find(inv, inv + dh, 0.0f) == inv + dh) continue;
    const std::int64_t n = end - first;
    scratch.resize(static_cast<std::size_t>(2 * n));
    float* r = scratch.data();  // [n]: R of the row's keys
    float* p = r + n;           // [n]: the pair's softmax
    t2t_logits(q + i * qs, k + first * qs, qs, dh, scale, n, r);
    for (std::int64_t c = 0; c < dh; ++c)
      if (inv[c] == 0.0f) {
        const float o = direct_feature_softmax(r, s + first * d + c, d, v + first * qs + c, qs, n, sigmoid_, p);
        visit(i, c, first, n, r, p, o);
      }
  }
}

void FastDisaMixer::source2token(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                 float* hidden, float* s, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  const float* b1 = params.value(s1_bias_) + h * dh;         // [dh]
  const float* b2 = params.value(s2_bias_) + h * dh;
  if (rows <= 0) return;
  kernels::weight_product(params.form(s1_matrices_[h]), rows, v, ldv, 0.0f, hidden, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) hidden[r * d + c] = elu(hidden[r * d + c] + b1[c]);
  kernels::weight_product(params.form(s2_matrices_[h]), rows, hidden, d, 0.0f, s, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) s[r * d + c] += b2[c];
}

void FastDisaMixer::fusion_gate(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                const float* o, float* g, float* u, std::int64_t rows) const {
  const std::int64_t dh = head_dim_, d = d_;
  // The gate's [dh, 2dh]: columns 0..dh read v, dh..2dh read O.
  const float* bg = params.value(gate_bias_) + h * dh;
  if (rows <= 0) return;
  kernels::weight_product(params.form(gate_v_matrices_[h]), rows, v, ldv, 0.0f, g, d);
  kernels::weight_product(params.form(gate_o_matrices_[h]), rows, o, d, 1.0f, g, d);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float gate = sigmoid(g[r * d + c] + bg[c]);
      g[r * d + c] = gate;
      u[r * d + c] = gate * v[r * ldv + c] + (1.0f - gate) * o[r * d + c];
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
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
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
    shift.assign(static_cast<std::size_t>(dh), 0.0f);
    // Dropout: Ã [T, T] and Ẽ [T, dh] of the task's head.
    static thread_local std::vector<float> a_drop, e_drop;
    a_drop.assign(static_cast<std::size_t>(dropout ? T * T : 0), 0.0f);
    e_drop.assign(static_cast<std::size_t>(dropout ? T * dh : 0), 0.0f);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        const std::int64_t at = b * T * d + h * dh;  // first element of this block in the [B·T, d] buffers
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
          // R = q kᵀ / √d_h, then A = φ(R) over the allowed keys with the row's max taken out.
          kernels::gemm(ctx.params.compute_type(), Trans::N, Trans::T, len, len, dh, scale, q, qs, k, qs, 0.0f, a, T);
          for (std::int64_t i = 0; i < len; ++i) {
            float* row = a + i * T;
            std::int64_t first = 0, end = 0;
            allowed_keys(h, i, len, first, end);
            const float top = token2token_row(row, first, end, sigmoid_);
            if (row_scale) row_scale[i] = top;
            std::fill(row, row + first, 0.0f);
            std::fill(row + std::max(first, end), row + len, 0.0f);
          }
          FactorDropout factors;
          if (dropout) {
            const std::int64_t row0 = (b * H + h) * T;  // the head's first row of both masks
            for (std::int64_t i = 0; i < len; ++i) s->drop_a.draw(row0 + i, a + i * T, &a_drop[i * T]);
            for (std::int64_t j = 0; j < len; ++j) s->drop_e.draw(row0 + j, e + j * d, &e_drop[j * dh]);
            factors = {a_drop.data(), T, e_drop.data(), dh, s->drop_a.keep + row0 * T, T,
                       s->drop_e.keep + row0 * dh, dh, s->drop_a.keep_scale()};
          }
          fast_disa_attend(len, len, dh, a, T, e, d, v, qs, o, d, inv_d, d, scratch, dropout ? &factors : nullptr,
                           ctx.params.compute_type());
          for_each_direct_pair(h, len, q, k, s_term, v, inv_d, direct,
                               [&](std::int64_t i, std::int64_t c, std::int64_t first, std::int64_t n, const float*,
                                   const float* p, float o_ic) {
                                 if (dropout) {  // O = Σ_j p_j m_j v_j with the factors' masks
                                   o_ic = 0.0f;
                                   for (std::int64_t j = 0; j < n; ++j)
                                     o_ic += p[j] * pair_mask(factors, i, first + j, c) * v[(first + j) * qs + c];
                                 }
                                 o[i * d + c] = o_ic;
                               });
          if (gated_) fusion_gate(ctx.params, h, v, qs, o, s->gate + at, s->u + at, len);
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
    // Dropout: Ã [len, T] and Ẽ [len, dh] of the task's head, as the forward applied them.
    static thread_local std::vector<float> a_drop, e_drop;
    a_drop.assign(static_cast<std::size_t>(dropout ? T * T : 0), 0.0f);
    e_drop.assign(static_cast<std::size_t>(dropout ? T * dh : 0), 0.0f);
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
        const float* hidden = s.hidden + at;
        const float* gu = du + at;
        float* dsh = ds + at;
        float* dpreh = dpre + at;
        float* dzh = gated_ ? dz + at : nullptr;
        const float* a = s.t2t + (b * H + h) * T * T;
        const float* row_scale = sigmoid_ ? s.row_scale + (b * H + h) * T : nullptr;
        for (std::int64_t i = len; i < T; ++i)  // padded rows were defined as 0: no gradient
          for (float* buffer : {dsh, dpreh, dzh})
            if (buffer) std::memset(buffer + i * d, 0, sizeof(float) * dh);
        if (len == 0) continue;

        // Fusion gate (§4.5): dO = dU ⊙ (1 − G) + dZ W_g,o; dv += dU ⊙ G + dZ W_g,v.
        dout.resize(static_cast<std::size_t>(len * dh));  // [len, dh]: ∂L/∂O
        if (gated_) {
          const float* g = s.gate + at;
          for (std::int64_t i = 0; i < len; ++i)
            for (std::int64_t c = 0; c < dh; ++c) {
              const float gi = g[i * d + c], dui = gu[i * d + c];
              dzh[i * d + c] = dui * (v[i * qs + c] - o[i * d + c]) * gi * (1.0f - gi);
              dv[i * qs + c] += dui * gi;
              dout[i * dh + c] = dui * (1.0f - gi);
            }
          kernels::weight_product_backward(params.form(gate_v_matrices_[h]), len, dzh, d, 1.0f, dv, qs);
          kernels::weight_product_backward(params.form(gate_o_matrices_[h]), len, dzh, d, 1.0f, dout.data(), dh);
        } else {
          for (std::int64_t i = 0; i < len; ++i) std::memcpy(&dout[i * dh], gu + i * d, sizeof(float) * dh);
        }

        // Feature-wise softmax (§4.4): dA, dE (into ds), dv.
        for (std::int64_t j = 0; j < len; ++j) std::memset(dsh + j * d, 0, sizeof(float) * dh);
        da.assign(static_cast<std::size_t>(len * len), 0.0f);  // [len, len]: ∂L/∂A, then ∂L/∂R
        FactorDropout factors;
        if (dropout) {
          const std::int64_t row0 = (b * H + h) * T;
          for (std::int64_t i = 0; i < len; ++i) s.drop_a.apply(row0 + i, a + i * T, &a_drop[i * T], len);
          for (std::int64_t j = 0; j < len; ++j) s.drop_e.apply(row0 + j, e + j * d, &e_drop[j * dh], dh);
          factors = {a_drop.data(), T, e_drop.data(), dh, s.drop_a.keep + row0 * T, T, s.drop_e.keep + row0 * dh, dh,
                     s.drop_a.keep_scale()};
        }
        fast_disa_attend_backward(len, len, dh, a, T, e, d, v, qs, o, d, s.inv_d + at, d, dout.data(), dh,
                                  da.data(), len, dsh, d, dv, qs, scratch, dropout ? &factors : nullptr,
                                  params.compute_type());
        // dS = dE ⊙ E: E = exp(S − shift) with the shift held constant (it cancels in O).
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < dh; ++c) dsh[j * d + c] *= e[j * d + c];

        // dR = dA ⊙ φ′(R). exp: φ′ = A (the row shift is constant); sigmoid: A (1 − σ(R)), σ(R) = A · row
        // scale. A is 0 at disallowed keys, so the mask carries over.
        for (std::int64_t i = 0; i < len; ++i) {
          const float* a_row = a + i * T;
          float* d_row = da.data() + i * len;
          if (!sigmoid_) {
            for (std::int64_t j = 0; j < len; ++j) d_row[j] *= a_row[j];
          } else {
            const float rs = row_scale[i];
            for (std::int64_t j = 0; j < len; ++j) d_row[j] *= a_row[j] * (1.0f - a_row[j] * rs);
          }
        }
        // Pairs the forward computed directly (§ kFactorisedMinDenominator): with z_j = log φ(R_ij) + S_jk
        // and O = Σ p_j v_jk, dz_j = dO p_j (v_jk − O) reaches S_jk, and R_ij through log φ′ (1, or 1 − σ).
        // Dropout: O = Σ p_j m_j v_jk, so dz_j = dO p_j (m_j v_jk − O) and dv_jk += dO p_j m_j.
        for_each_direct_pair(
            h, len, q, k, s.s_term + at, v, s.inv_d + at, direct,
            [&](std::int64_t i, std::int64_t c, std::int64_t first, std::int64_t n, const float* r, const float* p,
                float o_ic) {
              const float g = dout[i * dh + c];
              if (dropout) o_ic = o[i * d + c];  // the dropped output the forward kept
              for (std::int64_t j = 0; j < n; ++j) {
                const std::int64_t key = first + j;
                const float m = dropout ? pair_mask(factors, i, key, c) : 1.0f;
                const float dz = dropout ? g * p[j] * (m * v[key * qs + c] - o_ic) : g * p[j] * (v[key * qs + c] - o_ic);
                dv[key * qs + c] += dropout ? g * p[j] * m : g * p[j];
                dsh[key * d + c] += dz;
                da[i * len + key] += sigmoid_ ? dz * (1.0f - sigmoid(r[j])) : dz;
              }
            });
        // dq += dR k / √d_h; dk += dRᵀ q / √d_h
        kernels::gemm(params.compute_type(), Trans::N, Trans::N, len, dh, len, scale, da.data(), len, k, qs, 1.0f, dq, qs);
        kernels::gemm(params.compute_type(), Trans::T, Trans::N, len, dh, len, scale, da.data(), len, q, qs, 1.0f, dk, qs);

        // Source2token MLP, data path: dpre = (dS W_s2) ⊙ ELU′; dv += dpre W_s1.
        kernels::weight_product_backward(params.form(s2_matrices_[h]), len, dsh, d, 0.0f, dpreh, d);
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t c = 0; c < dh; ++c) dpreh[j * d + c] *= elu_grad_from_output(hidden[j * d + c]);
        kernels::weight_product_backward(params.form(s1_matrices_[h]), len, dpreh, d, 1.0f, dv, qs);
      }
    }
  }

  // Per-head parameters: one head per task, each a product over all B·T rows
  // (padded rows hold zeros), so no two tasks write the same gradient.
  const float* v = s.qkv + 2 * d;
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < H; ++h) {
    const std::int64_t col = h * dh;
    auto bias_grad = [&](const float* g, float* bias) {  // bias[c] += Σ_r g[r, c], rows in order
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < dh; ++c) bias[c] += g[r * d + c];
    };
    if (gated_) {
      float* gwg = params.grad(gate_weight_) + h * dh * 2 * dh;  // [dh, 2dh]: dZᵀ [v ; O]
      kernels::gemm(params.compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, v + col, qs, 1.0f, gwg, 2 * dh);
      kernels::gemm(params.compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + col, d, s.o + col, d, 1.0f, gwg + dh, 2 * dh);
      bias_grad(dz + col, params.grad(gate_bias_) + col);
    }
    kernels::gemm(params.compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, ds + col, d, s.hidden + col, d, 1.0f,
                   params.grad(s2_weight_) + h * dh * dh, dh);
    bias_grad(ds + col, params.grad(s2_bias_) + col);
    kernels::gemm(params.compute_type(), Trans::T, Trans::N, dh, dh, rows, 1.0f, dpre + col, d, v + col, qs, 1.0f,
                   params.grad(s1_weight_) + h * dh * dh, dh);
    bias_grad(dpre + col, params.grad(s1_bias_) + col);
  }

  qkv_.backward(params, s.x, dqkv, dx, rows);
  ctx.arena.release(mark);
}

void FastDisaMixer::step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                         std::int64_t t_max) const {
  require(causal_, "Fast-DiSA: incremental decoding needs the causal variant (decoder self-attention)");
  const std::int64_t H = heads_, dh = head_dim_, d = d_, qs = 3 * d, width = cache_width(), keys = t + 1;
  float* proj = ctx.arena.alloc(n * qs);  // [N, 3d]
  qkv_.forward(ctx.params, x, proj, n);
  float* hidden = ctx.arena.alloc(n * d);  // [N, d]
  float* s_now = ctx.arena.alloc(n * d);   // [N, d]: S of position t, unshifted
  for (std::int64_t h = 0; h < H; ++h)
    source2token(ctx.params, h, proj + 2 * d + h * dh, qs, hidden + h * dh, s_now + h * dh, n);
  for (std::int64_t i = 0; i < n; ++i) {
    float* entry = cache + (i * t_max + t) * width;  // [3d]: k | S | v
    std::memcpy(entry, proj + i * qs + d, sizeof(float) * d);
    std::memcpy(entry + d, s_now + i * d, sizeof(float) * d);
    std::memcpy(entry + 2 * d, proj + i * qs + 2 * d, sizeof(float) * d);
  }
  float* o = ctx.arena.alloc(n * d);  // [N, d]
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    std::vector<float> logit(static_cast<std::size_t>(keys)), weight(static_cast<std::size_t>(keys)),
        p(static_cast<std::size_t>(keys)), shift(static_cast<std::size_t>(dh)), den(static_cast<std::size_t>(dh)),
        num(static_cast<std::size_t>(dh));
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t h = 0; h < H; ++h) {
        const float* q = proj + i * qs + h * dh;
        const float* base = cache + i * t_max * width + h * dh;  // k at +0, S at +d, v at +2d of each entry
        t2t_logits(q, base, width, dh, scale, keys, logit.data());
        weight = logit;
        token2token_row(weight.data(), 0, keys, sigmoid_);
        std::fill(shift.begin(), shift.end(), -std::numeric_limits<float>::infinity());
        for (std::int64_t j = 0; j < keys; ++j)
          for (std::int64_t c = 0; c < dh; ++c) shift[c] = std::max(shift[c], base[j * width + d + c]);
        std::fill(den.begin(), den.end(), 0.0f);
        std::fill(num.begin(), num.end(), 0.0f);
        for (std::int64_t j = 0; j < keys; ++j) {
          const float* sj = base + j * width + d;
          const float* vj = base + j * width + 2 * d;
          for (std::int64_t c = 0; c < dh; ++c) {
            const float ae = weight[j] * std::exp(sj[c] - shift[c]);
            den[c] += ae;
            num[c] += ae * vj[c];
          }
        }
        for (std::int64_t c = 0; c < dh; ++c)  // keys ≥ 1, so a small D is the shared shift's underflow
          o[i * d + h * dh + c] = den[c] >= kFactorisedMinDenominator
                                      ? num[c] * (1.0f / den[c])
                                      : direct_feature_softmax(logit.data(), base + d + c, width, base + 2 * d + c,
                                                               width, keys, sigmoid_, p.data());
      }
    }
  }
  const float* u = o;
  if (gated_) {
    float* g = ctx.arena.alloc(n * d);
    float* gated = ctx.arena.alloc(n * d);
    for (std::int64_t h = 0; h < H; ++h)
      fusion_gate(ctx.params, h, proj + 2 * d + h * dh, qs, o + h * dh, g + h * dh, gated + h * dh, n);
    u = gated;
  }
  o_.forward(ctx.params, u, y, n);
}

MixerMaps FastDisaMixer::export_maps(const TokenMixer::Saved& saved, std::int64_t b) const {
  const Saved& s = static_cast<const Saved&>(saved);
  const std::int64_t H = heads_, dh = head_dim_, d = d_, T = s.t;
  const std::int64_t len = std::clamp<std::int64_t>(s.lengths[b], 0, T);
  MixerMaps maps;
  maps.heads = H;
  maps.length = len;
  maps.weights.assign(static_cast<std::size_t>(H * len * len), 0.0f);
  // P_ijk = A_ij E_jk / D_ik; its mean over k is A_ij · mean_k(E_jk / D_ik).
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < len; ++i) {
      const float* a = s.t2t + ((b * H + h) * T + i) * T;
      const float* inv_d = s.inv_d + (b * T + i) * d + h * dh;
      float* out = maps.weights.data() + (h * len + i) * len;
      for (std::int64_t j = 0; j < len; ++j) {
        if (a[j] == 0.0f) continue;
        const float* e = s.e + (b * T + j) * d + h * dh;
        double mean = 0.0;
        for (std::int64_t c = 0; c < dh; ++c) mean += static_cast<double>(e[c]) * inv_d[c];
        out[j] = static_cast<float>(a[j] * mean / static_cast<double>(dh));
      }
    }
  // The pairs computed directly add their own P_ijk / d_h.
  std::vector<float> direct;
  for (std::int64_t h = 0; h < H; ++h) {
    const float* q = s.qkv + b * T * 3 * d + h * dh;
    const std::int64_t at = b * T * d + h * dh;
    float* out = maps.weights.data() + h * len * len;
    for_each_direct_pair(h, len, q, q + d, s.s_term + at, q + 2 * d, s.inv_d + at, direct,
                         [&](std::int64_t i, std::int64_t, std::int64_t first, std::int64_t n, const float*,
                             const float* p, float) {
                           for (std::int64_t j = 0; j < n; ++j) out[i * len + first + j] += p[j] / dh;
                         });
  }
  nlohmann::json directions = nlohmann::json::array();
  for (std::int64_t h = 0; h < H; ++h) directions.push_back(causal_ || h < H / 2 ? "forward" : "backward");
  maps.extras["directions"] = directions;
  maps.extras["averaged_over_features"] = true;
  if (gated_) {
    nlohmann::json gate = nlohmann::json::array();
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<float> per_token(static_cast<std::size_t>(len));
      for (std::int64_t i = 0; i < len; ++i) {
        double mean = 0.0;
        for (std::int64_t c = 0; c < dh; ++c) mean += s.gate[(b * T + i) * d + h * dh + c];
        per_token[i] = static_cast<float>(mean / static_cast<double>(dh));
      }
      gate.push_back(per_token);
    }
    maps.extras["fusion_gate"] = gate;
  } else {
    maps.extras["fusion_gate"] = nullptr;
  }
  return maps;
}

}  // namespace attn::nn
