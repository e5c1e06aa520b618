// DiSAN's fusion gate (Shen et al. 2018, DiSAN eq. 15–16; Fast-DiSA;
// docs/mechanisms-spec.md §3.1, §4.5), one per head, shared by DiSA and Fast-DiSA: with v_h
// the head's input features and O_h its attention output,
//     G_h = σ([v_h ; O_h] W_g[h]ᵀ + b_g[h]),   U_h = G_h ⊙ v_h + (1 − G_h) ⊙ O_h
// (DiSAN's σ(W_f1 s + W_f2 h + b_f) with the two matrices side by side).
//
// Parameters under `name`:
//   <name>.gate.weight [H, d_h, 2 d_h] (columns 0..d_h read v, d_h..2d_h read O)
//   <name>.gate.bias [H, d_h]
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/nn/param_store.h"

namespace attn::nn {

class FusionGate {
 public:
  // Declares the gate of `heads` heads of head_dim features; the buffers of
  // O, G, U and their gradients have rows `row_stride` floats apart (the
  // layer's width d).
  void declare(ParamStore& params, const std::string& name, std::int64_t heads, std::int64_t head_dim,
               std::int64_t row_stride);

  // Head h over `rows` positions; v (row stride ldv), o, g, u (row stride d)
  // point at the head's first column. g = σ([v; o] W_g[h]ᵀ + b_g[h]) and
  // u = g ⊙ v + (1 − g) ⊙ o, written. Runs on the calling thread.
  void forward(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, const float* o, float* g,
               float* u, std::int64_t rows) const;
  // Its data backward given du (∂L/∂U): dz (written) = du ⊙ (v − o) ⊙ g (1 − g),
  // the pre-activation's gradient; dv += du ⊙ g + dz W_g,v[h]; dout: [rows, d_h]
  // (row stride d_h, written) = du ⊙ (1 − g) + dz W_g,o[h]. Strides as forward's.
  void backward(const ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, const float* o,
                const float* g, const float* du, float* dz, float* dv, float* dout, std::int64_t rows) const;
  // Adds head h's W_g, b_g gradients over all `rows` rows; v (stride ldv), o and
  // dz (stride d) point at column 0 of their [rows, d] buffers.
  void parameter_gradients(ParamStore& params, std::int64_t h, const float* v, std::int64_t ldv, const float* o,
                           const float* dz, std::int64_t rows) const;

  // The maps' "fusion_gate" extra: [H][len], G of each head and position
  // averaged over the head's features; g: [len, d] (row stride d).
  nlohmann::json feature_means(const float* g, std::int64_t len) const;

 private:
  std::int64_t heads_ = 0, head_dim_ = 0, d_ = 0;
  ParamId weight_ = -1, bias_ = -1;
  // Per head, its two halves [d_h, d_h] inside its [d_h, 2 d_h]: the one that reads v and the one that reads O.
  std::vector<WeightMatrixId> v_matrices_, o_matrices_;
};

}  // namespace attn::nn
