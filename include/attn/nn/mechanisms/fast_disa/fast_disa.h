// Fast-DiSA (Shen et al. 2018, arXiv 1805.00912; docs/mechanisms-spec.md §3,
// §4.4, §4.5) as a TokenMixer: per head, a token2token weight A from q·kᵀ and a
// multi-dimensional source2token term S from v, combined in a feature-wise
// softmax over keys that is computed in its factorised form
//     O = (A (v ⊙ e^S)) ⊘ (A e^S)
// — two [T×T]·[T×d_h] products per head, never a T×T×d_h tensor — then a
// fusion gate U = G ⊙ v + (1 − G) ⊙ O and the output projection.
//
// Encoder (spec.causal false): the first H/2 heads see only earlier keys
// (j < i), the others only later keys (j > i); H must be even. Decoder
// (spec.causal true, our extension, §3.3): every head sees j ≤ i
// (directional/directions.h, shared with DiSA).
//
// Parameters under `name`:
//   <name>.q/.k/.v.weight [d, d], .bias [d]   (contiguous: one [3d, d] GEMM)
//   <name>.o.weight [d, d], <name>.o.bias [d]
//   <name>.s1.weight [H, d_h, d_h], <name>.s1.bias [H, d_h]
//   <name>.s2.weight [H, d_h, d_h], <name>.s2.bias [H, d_h]
//   <name>.gate.weight [H, d_h, 2 d_h], <name>.gate.bias [H, d_h]   (only with spec.disa_gate;
//   the fusion gate DiSA shares, directional/fusion_gate.h)
// Per head h (row-vector convention, weights stored [out, in] as in PyTorch):
//   S_h = ELU(v_h W_s1[h]ᵀ + b_s1[h]) W_s2[h]ᵀ + b_s2[h]
//   G_h = σ([v_h ; O_h] W_g[h]ᵀ + b_g[h])
//
// Attention dropout (spec.attention_dropout = p, training only; §0.6, §3.5,
// §4.4): as in the authors' code, on the two factors of the weights, each
// kept with probability √(1 − p), so that a term A_ij E_jk survives with
// probability 1 − p:
//     O = (Ã (v ⊙ Ẽ)) ⊘ (A E),  Ã = A ⊙ r_A / √(1 − p),  Ẽ = E ⊙ r_E / √(1 − p)
// The masks go on the numerator only; the denominator D = A E stays
// undropped (the code computes D before its dropout), so O is an unbiased
// estimate of the undropped O for fixed D, and a dropped term is not
// renormalised away. r_A is drawn per (sequence, head, query, key), as A is
// a weight per token pair; r_E per (sequence, head, key, feature), the same
// for every query, as E is a weight per key token and feature (the code
// drops E once, before the product with A). Pairs computed directly (the
// denominator's underflow guard) use the same masks: O = Σ_j p_j m_j v_j with
// m_j = r_A,ij r_E,jk / (1 − p). The saved A and E, and hence export_maps and
// the backward's softmax parts, are the undropped ones.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/nn/attention.h"
#include "attn/nn/linear.h"
#include "attn/nn/mechanisms/directional/fusion_gate.h"
#include "attn/nn/mechanisms/fast_disa/feature_softmax.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class FastDisaMixer final : public TokenMixer {
 public:
  // Throws attn::Error when d % heads != 0, when heads is odd for the
  // bidirectional (encoder) form, or when spec.disa_t2t is not exp|sigmoid.
  FastDisaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

  struct Saved final : TokenMixer::Saved {
    const float* x = nullptr;    // [B·T, d] input
    float* qkv = nullptr;        // [B·T, 3d] projections q | k | v
    float* hidden = nullptr;     // [B·T, d] ELU(v W_s1ᵀ + b_s1), per head in its d_h columns; 0 on padded rows
    float* s_term = nullptr;     // [B·T, d] S, the source2token term, unshifted; 0 on padded rows
    float* e = nullptr;          // [B·T, d] exp(S − per-feature max over valid keys); 0 on padded rows
    float* t2t = nullptr;        // [B, H, T, T] A: exp(R − row max) or σ(R)/max σ(R) at allowed keys, else 0
    float* row_scale = nullptr;  // [B, H, T] sigmoid only: max_j σ(R_ij) of each row (σ(R) = A · row_scale)
    float* o = nullptr;          // [B·T, d] feature-wise attention output; 0 on padded rows
    float* inv_d = nullptr;      // [B·T, d] 1 / (A E); 0 where there is no key or the pair was computed directly
    float* gate = nullptr;       // [B·T, d] G (null without the gate); 0 on padded rows
    float* u = nullptr;          // [B·T, d] heads concatenated (== o without the gate); 0 on padded rows
    // Attention dropout (inactive in evaluation or at p = 0), each factor with p_f = 1 − √(1 − p):
    WeightDropout drop_a;  // r_A: rows (b, h, query) of T keys, laid out like t2t
    WeightDropout drop_e;  // r_E: rows (b, h, key) of d_h features
    std::int64_t batch = 0, t = 0;
    const std::int32_t* lengths = nullptr;
  };

  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;

  // Cache entry per position: k [d], S (unshifted) [d], v [d]. A step re-shifts
  // S over the t + 1 cached positions: O(t · d_h) per head. Causal only.
  std::int64_t cache_width() const override { return 3 * d_; }
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;

  // weights: P_ijk averaged over the d_h features; extras: "directions",
  // "averaged_over_features", "fusion_gate" ([H][L] feature mean of G, or null).
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return "fastdisa"; }

 private:
  // Keys [first, end) that query i of head h may see in a sequence of length len.
  void allowed_keys(std::int64_t h, std::int64_t i, std::int64_t len, std::int64_t& first, std::int64_t& end) const;
  // Head h over `rows` positions; v, hidden, s, o, g, u point at the head's
  // first column, with row strides ldv (v) and d_ (the others). Called inside
  // the (sequence, head) loops, so their GEMMs run on the calling thread.
  // hidden = ELU(v W_s1[h]ᵀ + b_s1[h]), s = hidden W_s2[h]ᵀ + b_s2[h].
  void source2token(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, float* hidden, float* s,
                    std::int64_t rows) const;
  // Its data backward given ds (∂L/∂S): dpre = (ds W_s2[h]) ⊙ ELU′ (from hidden),
  // dv += dpre W_s1[h]; hidden, ds, dpre of row stride d_, dv of ldv.
  void source2token_backward(const ParamStore& params, std::int64_t h, const float* hidden, const float* ds,
                             float* dpre, float* dv, std::int64_t ldv, std::int64_t rows) const;
  // Adds head h's W_s1, b_s1, W_s2, b_s2 gradients over all `rows` rows of the
  // [rows, d] buffers (v: stride ldv); v, hidden, ds, dpre point at column 0.
  void source2token_parameter_gradients(ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv,
                                        const float* hidden, const float* ds, const float* dpre,
                                        std::int64_t rows) const;
  // R = q kᵀ / √d_h over len positions (q, k: row stride 3d), then a: [len, lda]
  // = φ(R) at the keys query i may see, each row's max taken out (token2token_row),
  // 0 at the others; row_scale: [len] max σ(R) per row (sigmoid), or null.
  void token2token(kernels::ComputeType type, std::int64_t h, const float* q, const float* k, std::int64_t len,
                   float* a, std::int64_t lda, float* row_scale) const;
  // The (query, feature) pairs of head h of one sequence whose factorised
  // denominator fell below its floor (inv_d 0 with keys allowed), each
  // recomputed by the direct softmax: visit(i, c, first, n, r, p, o) with r: [n]
  // the row's logits R and p: [n] the pair's weights over keys [first, first+n),
  // o their sum over v. q, k, v: [len, d_h] rows of stride 3d; s, inv_d: stride d.
  template <class Visit>
  void for_each_direct_pair(std::int64_t h, std::int64_t len, const float* q, const float* k, const float* s,
                            const float* v, const float* inv_d, std::vector<float>& scratch, Visit&& visit) const;
  // The direct pairs' share of the backward (for_each_direct_pair's pairs of
  // head h): adds to dv (stride 3d), ds (stride d) and da: [len, len] (∂L/∂R)
  // given dout: [len, dh]; o is the forward's output, drop its dropout or null.
  void direct_pairs_backward(std::int64_t h, std::int64_t len, const float* q, const float* k, const float* s_term,
                             const float* v, const float* inv_d, const float* o, const float* dout,
                             const FactorDropout* drop, float* dv, float* ds, float* da,
                             std::vector<float>& scratch) const;

  std::int64_t d_ = 0, heads_ = 0, head_dim_ = 0;
  bool causal_ = false, gated_ = true, sigmoid_ = false;
  float attention_dropout_ = 0.0f;
  Linear o_;
  Linear qkv_;  // view of q, k, v as one [3d, d] projection
  ParamId s1_weight_ = -1, s1_bias_ = -1, s2_weight_ = -1, s2_bias_ = -1;
  // Per head h, the matrices the products read: s1, s2 [dh, dh].
  std::vector<WeightMatrixId> s1_matrices_, s2_matrices_;
  FusionGate gate_;  // declared only with spec.disa_gate
};

}  // namespace attn::nn
