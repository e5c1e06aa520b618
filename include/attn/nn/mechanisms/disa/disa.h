// DiSA, the directional multi-dimensional self-attention of DiSAN (Shen et
// al. 2018, "DiSAN: Directional Self-Attention Network for RNN/CNN-free
// Language Understanding", sections 3.2–3.3) as a TokenMixer: the yardstick that
// Fast-DiSA (fast_disa.h) claims to beat in time and memory. Per head h, with
// v = x W_vᵀ + b_v the projected input and v_h its d_h columns:
//     f_ijk = c · tanh((v_i W_f1[h]ᵀ + v_j W_f2[h]ᵀ + b_f[h])_k / c) + M_ij,   c = 5
//     P_ijk = softmax_j(f_ijk)          (one distribution over keys per feature k)
//     O_ik  = Σ_j P_ijk v_jk
//     U_h   = G ⊙ v_h + (1 − G) ⊙ O_h,  G = σ([v_h ; O_h] W_g[h]ᵀ + b_g[h])
// then the heads concatenated and the output projection. M is the directional
// mask (0 or −∞) of Fast-DiSA's heads (directional/directions.h): encoder heads
// forward (j < i) or backward (j > i), the causal decoder's j ≤ i. A row with
// no key has P = 0 and O = 0 (U = G ⊙ v_h).
//
// The T × T × d_h tensors are what DiSAN computes and Fast-DiSA removes, and
// they are kept as autograd would keep them: the forward materialises, per
// (sequence, head), the tanh term and P, [T, T, d_h] each, and saves both for
// the backward (docs/mechanisms.md, "DiSA": 2·B·T²·d floats per layer).
// Since |f| < c, e^f lies in (e^-5, e^5): the softmax needs no max shift.
//
// Parameters under `name` (row-vector convention, weights stored [out, in]):
//   <name>.v.weight [d, d], <name>.v.bias [d]     (DiSAN's h, Fast-DiSA's v)
//   <name>.o.weight [d, d], <name>.o.bias [d]
//   <name>.f1.weight [H, d_h, d_h]   (W^(1): reads the query v_i)
//   <name>.f2.weight [H, d_h, d_h]   (W^(2): reads the key v_j)
//   <name>.f.bias [H, d_h]           (b^(1))
//   <name>.gate.weight [H, d_h, 2 d_h], <name>.gate.bias [H, d_h]   (directional/fusion_gate.h)
//
// Attention dropout (spec.attention_dropout = p, training only): on P, per
// (query, key, feature), the weights that multiply the values:
// O_ik = Σ_j P̃_ijk v_jk, P̃ = P ⊙ r / (1 − p), r drawn per row (b, h, i) of
// T·d_h weights. The saved P (hence export_maps) is the undropped one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/nn/attention.h"
#include "attn/nn/linear.h"
#include "attn/nn/mechanisms/directional/fusion_gate.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

class DisaMixer final : public TokenMixer {
 public:
  // DiSAN's c: the compatibility is c·tanh(·/c), within (−c, c).
  static constexpr float kTanhScale = 5.0f;

  // Throws attn::Error when d % heads != 0 or when heads is odd for the
  // bidirectional (encoder) form.
  DisaMixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

  struct Saved final : TokenMixer::Saved {
    const float* x = nullptr;  // [B·T, d] input
    float* v = nullptr;        // [B·T, d] v = x W_vᵀ + b_v
    float* query = nullptr;    // [B·T, d] v_h W_f1[h]ᵀ per head; 0 on padded rows
    float* key = nullptr;      // [B·T, d] v_h W_f2[h]ᵀ + b_f[h] per head; 0 on padded rows
    float* tanh = nullptr;     // [B, H, T, T, d_h] tanh((query_i + key_j)/c) at allowed keys, else 0
    float* p = nullptr;        // [B, H, T, T, d_h] P_ijk (undropped) at allowed keys, else 0
    float* o = nullptr;        // [B·T, d] O; 0 on padded rows and rows with no key
    float* gate = nullptr;     // [B·T, d] G; 0 on padded rows
    float* u = nullptr;        // [B·T, d] heads concatenated; 0 on padded rows
    WeightDropout drop;        // rows (b, h, i) of T·d_h, laid out like p
    std::int64_t batch = 0, t = 0;
    const std::int32_t* lengths = nullptr;
  };

  using TokenMixer::forward;
  void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, std::unique_ptr<TokenMixer::Saved>& saved) const override;
  void backward(StepContext& ctx, const TokenMixer::Saved& saved, const float* dy, float* dx) const override;

  // Cache entry per position: v [d], key term [d]. A step computes position t's
  // row of the tensor, [t + 1, d_h] per head: O(t · d). Causal only.
  std::int64_t cache_width() const override { return 2 * d_; }
  void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
            std::int64_t t_max) const override;

  // weights: P_ijk averaged over the d_h features; extras as Fast-DiSA's:
  // "directions", "averaged_over_features", "fusion_gate" ([H][L] feature mean of G).
  MixerMaps export_maps(const TokenMixer::Saved& saved, std::int64_t b) const override;
  std::string kind() const override { return "disa"; }

 private:
  // Head h's query and key terms over `rows` positions: query = v W_f1[h]ᵀ,
  // key = v W_f2[h]ᵀ + b_f[h]; v (row stride ldv), query, key (row stride d_)
  // point at the head's first column. Runs on the calling thread.
  void head_terms(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, float* query, float* key,
                  std::int64_t rows) const;
  // One query's row of the tensors over n keys: tanh_row, p_row: [n, d_h]
  // (rows d_h apart) written with tanh((query + key_j)/c) and P = softmax over
  // the n keys of c·tanh, per feature. query: [d_h]; key: [n, d_h] (row stride
  // ldk); den: [d_h] scratch. n = 0 writes nothing.
  void row_weights(const float* query, const float* key, std::int64_t ldk, std::int64_t n, float* tanh_row,
                   float* p_row, float* den) const;
  // Its backward, with O = Σ_j P̃_j ⊙ v_j (P̃ = p_drop under dropout, else P):
  // given dout: [d_h] (∂L/∂O) and the forward's o: [d_h], accumulates dv (row
  // stride ldv, the n keys' rows), dquery: [d_h] and dkey: [n, d_h] (lddk).
  void row_weights_backward(const float* tanh_row, const float* p_row, const float* p_drop, const float* v,
                            std::int64_t ldv, const float* o, const float* dout, std::int64_t n, float* dv,
                            float* dquery, float* dkey, std::int64_t lddk) const;
  // o: [d_h] = Σ_j p_j ⊙ v_j over n keys; p: [n, d_h], v: row stride ldv.
  void mix_row(const float* p, const float* v, std::int64_t ldv, std::int64_t n, float* o) const;

  std::int64_t d_ = 0, heads_ = 0, head_dim_ = 0;
  bool causal_ = false;
  float attention_dropout_ = 0.0f;
  Linear v_, o_;
  ParamId f1_weight_ = -1, f2_weight_ = -1, f_bias_ = -1;
  std::vector<WeightMatrixId> f1_matrices_, f2_matrices_;  // per head, [d_h, d_h]
  FusionGate gate_;
};

}  // namespace attn::nn
