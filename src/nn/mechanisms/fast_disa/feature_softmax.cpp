#include "attn/nn/mechanisms/fast_disa/feature_softmax.h"

#include "head_math.h"

namespace attn::nn {

using kernels::Trans;

namespace {

// The two per-key factors side by side in rows of stride w (lk rows of dh
// each): E into e_out and v ⊙ E_num into ve_out, where E_num is the
// numerator's E (Ẽ under dropout). The forward puts E first, the backward
// v ⊙ E: each order is what its products sum over.
void pack_key_factors(std::int64_t lk, std::int64_t dh, const float* e, std::int64_t lde, const float* e_num,
                      std::int64_t lde_num, const float* v, std::int64_t ldv, float* e_out, float* ve_out,
                      std::int64_t w) {
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      e_out[j * w + c] = e[j * lde + c];
      ve_out[j * w + c] = v[j * ldv + c] * e_num[j * lde_num + c];
    }
}

// gam: [lq, 2dh] = Γ | −Γ ⊙ O, with Γ = dO ⊘ D (0 where there is no key).
void output_gradient_factors(std::int64_t lq, std::int64_t dh, const float* o, std::int64_t ldo, const float* inv_d,
                             std::int64_t ldi, const float* dout, std::int64_t lddo, float* gam) {
  const std::int64_t w = 2 * dh;
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float g = dout[i * lddo + c] * inv_d[i * ldi + c];
      gam[i * w + c] = g;
      gam[i * w + dh + c] = -g * o[i * ldo + c];
    }
}

// Without dropout: dA += Γ (v ⊙ E)ᵀ − (Γ ⊙ O) Eᵀ as one product with k = 2d_h;
// then atg = Aᵀ [Γ | −Γ ⊙ O], dE += v ⊙ AᵀΓ − Aᵀ(Γ ⊙ O) and dv += E ⊙ AᵀΓ.
// gam, vee, atg as in fast_disa_attend_backward.
void key_gradients(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda, const float* e,
                   std::int64_t lde, const float* v, std::int64_t ldv, const float* gam, const float* vee, float* atg,
                   float* da, std::int64_t ldda, float* de, std::int64_t ldde, float* dv, std::int64_t lddv,
                   kernels::ComputeType type) {
  const std::int64_t w = 2 * dh;
  kernels::gemm(type, Trans::N, Trans::T, lq, lk, w, 1.0f, gam, w, vee, w, 1.0f, da, ldda);
  kernels::gemm(type, Trans::T, Trans::N, lk, w, lq, 1.0f, a, lda, gam, w, 0.0f, atg, w);
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float at_gamma = atg[j * w + c];
      de[j * ldde + c] += v[j * ldv + c] * at_gamma + atg[j * w + dh + c];
      dv[j * lddv + c] += e[j * lde + c] * at_gamma;
    }
}

// With dropout (docs/mechanisms-spec.md §3.5, §4.4): dA += [Γ (v ⊙ Ẽ)ᵀ] ⊙ r_A/√keep − (Γ ⊙ O) Eᵀ;
// dE += [v ⊙ (ÃᵀΓ)] ⊙ r_E/√keep − Aᵀ(Γ ⊙ O); dv += Ẽ ⊙ ÃᵀΓ.
// numerator: [lq, lk] scratch for Γ (v ⊙ Ẽ)ᵀ.
void dropped_key_gradients(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                           const float* v, std::int64_t ldv, const FactorDropout& drop, const float* gam,
                           const float* vee, float* atg, float* numerator, float* da, std::int64_t ldda, float* de,
                           std::int64_t ldde, float* dv, std::int64_t lddv, kernels::ComputeType type) {
  const std::int64_t w = 2 * dh;
  kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, gam, w, vee, w, 0.0f, numerator, lk);
  for (std::int64_t i = 0; i < lq; ++i)
    for (std::int64_t j = 0; j < lk; ++j)
      if (drop.keep_a[i * drop.ldka + j]) da[i * ldda + j] += numerator[i * lk + j] * drop.scale;
  kernels::gemm(type, Trans::N, Trans::T, lq, lk, dh, 1.0f, gam + dh, w, vee + dh, w, 1.0f, da, ldda);
  kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, drop.a, drop.lda, gam, w, 0.0f, atg, w);
  kernels::gemm(type, Trans::T, Trans::N, lk, dh, lq, 1.0f, a, lda, gam + dh, w, 0.0f, atg + dh, w);
  for (std::int64_t j = 0; j < lk; ++j)
    for (std::int64_t c = 0; c < dh; ++c) {
      const float at_gamma = atg[j * w + c];
      const float kept = drop.keep_e[j * drop.ldke + c] ? drop.scale : 0.0f;
      de[j * ldde + c] += v[j * ldv + c] * at_gamma * kept + atg[j * w + dh + c];
      dv[j * lddv + c] += drop.e[j * drop.lde + c] * at_gamma;
    }
}

}  // namespace

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
  pack_key_factors(lk, dh, e, lde, drop ? drop->e : e, drop ? drop->lde : lde, v, ldv, ev, ev + dh, w);
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
      const float inv = den >= fast_disa::kFactorisedMinDenominator ? 1.0f / den : 0.0f;  // no key: O = 0, not 0/0
      inv_d[i * ldi + c] = inv;
      o[i * ldo + c] = num * inv;
    }
}

void fast_disa_attend_backward(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                               const float* e, std::int64_t lde, const float* v, std::int64_t ldv, const float* o,
                               std::int64_t ldo, const float* inv_d, std::int64_t ldi, const float* dout,
                               std::int64_t lddo, float* da, std::int64_t ldda, float* de, std::int64_t ldde, float* dv,
                               std::int64_t lddv, std::vector<float>& scratch, const FactorDropout* drop,
                               kernels::ComputeType type) {
  if (lq <= 0 || lk <= 0) return;
  const std::int64_t w = 2 * dh;
  const std::size_t need = static_cast<std::size_t>((lq + 2 * lk) * w + (drop ? lq * lk : 0));
  if (scratch.size() < need) scratch.resize(need);
  float* gam = scratch.data();  // [lq, 2dh]: Γ | −Γ ⊙ O
  float* vee = gam + lq * w;    // [lk, 2dh]: v ⊙ E | E (dropout: v ⊙ Ẽ | E)
  float* atg = vee + lk * w;    // [lk, 2dh]: Aᵀ Γ | −Aᵀ (Γ ⊙ O) (dropout: Ãᵀ Γ | −Aᵀ (Γ ⊙ O))
  output_gradient_factors(lq, dh, o, ldo, inv_d, ldi, dout, lddo, gam);
  pack_key_factors(lk, dh, e, lde, drop ? drop->e : e, drop ? drop->lde : lde, v, ldv, vee + dh, vee, w);
  if (!drop)
    key_gradients(lq, lk, dh, a, lda, e, lde, v, ldv, gam, vee, atg, da, ldda, de, ldde, dv, lddv, type);
  else
    dropped_key_gradients(lq, lk, dh, a, lda, v, ldv, *drop, gam, vee, atg, atg + lk * w, da, ldda, de, ldde, dv, lddv,
                          type);
}

}  // namespace attn::nn
