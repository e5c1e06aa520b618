// MUSE's local branch (docs/mechanisms-spec.md §1.1, §4.3): dynamic depth-wise
// convolution cells whose kernels are predicted per position from the shared
// value projection V, mixed by a softmax gate over the kernel sizes. The
// cells are also the convolutions of LightConv and DynamicConv (Wu et al.
// 2019; src/nn/mechanisms/lightconv), one cell per layer, no gate.
//
// One cell with kernel k and offset P (encoder: P = k/2, centred; decoder:
// P = k − 1, causal):
//   z[b,t,h,:] = V[b,t,:] · Wfᵀ                         Wf: [H·k, d], no bias
//                (fixed taps, LightConv: z[b,t,h,:] = W[h,:], W: [H, k], every position alike)
//   w[b,t,h,:] = softmax over all k taps of z[b,t,h,:]   (no renormalisation at the edges)
//   ŵ          = DropConnect(w), only in training with p > 0
//   C[b,t,c]   = Σ_κ ŵ[b,t,h(c),κ] · V[b, t+κ−P, c],     h(c) = c / d_h
// V[b,s,·] counts as zero outside [0, length_b): a padded position never leaks
// into a real one (§1.3), so a sentence gives the same output alone or in a
// padded batch. Rows t ≥ length_b of C are 0 and their taps are 0.
// Even k: P = k/2 as well, i.e. taps at offsets −k/2 … k/2 − 1 (one more to
// the left); the authors' even-kernel branch is buggy (§1.5) and unused.
//
// The gate: Cmix = Σ_i π_i C_i with π = softmax(α), α: [n] ("<name>.gate").
//
// V is read in place: rows [B·T] with a row stride (the V columns of the
// fused qkv buffer [B·T, 3d] at column offset 2d, stride 3d), and the batch is
// dense (sequence b starts at row b·T).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/nn/context.h"
#include "attn/nn/param_store.h"

namespace attn::nn {

struct ConvDims {
  std::int64_t batch = 0, t = 0;  // padded length T
  std::int64_t heads = 0, d = 0;  // d = heads · head_dim channels
  std::int64_t kernel = 0;
  bool causal = false;
  std::int64_t head_dim() const { return d / heads; }
  std::int64_t offset() const { return causal ? kernel - 1 : kernel / 2; }  // P
};

// The data path of one cell, given its taps.
// taps: [B·T, H, k] (ŵ); v: [B·T] rows of stride ldv (d columns used);
// out: [B·T] rows of stride ldo. out[b,t,:] += scale · C[b,t,:] for t < length_b
// (pad rows untouched). Threads over batch × heads.
void dynamic_conv_forward(const ConvDims& dims, const float* taps, const float* v, std::int64_t ldv,
                          const std::int32_t* lengths, float scale, float* out, std::int64_t ldo);

// Backward of out += scale · C with g = dout (rows of stride lddo):
//   dtaps[b,t,h,κ] = Σ_{c∈h} g[b,t,c] · V[b,t+κ−P,c]   (written; 0 for pad rows and outside taps;
//                                                       the unscaled ∂⟨g, C⟩/∂ŵ)
//   dv[b,s,c]     += scale · Σ_κ ŵ[b,s−κ+P,h,κ] · g[b,s−κ+P,c]   (data path; valid rows only)
// Returns ⟨g, C⟩ = Σ ŵ ⊙ dtaps over all of B, T, H, k: the gate's g_i.
// Bitwise the same for any thread count (partial sums per (b, h), added in order).
double dynamic_conv_backward(const ConvDims& dims, const float* taps, const float* v, std::int64_t ldv,
                             const std::int32_t* lengths, const float* dout, std::int64_t lddo, float scale,
                             float* dtaps, float* dv, std::int64_t lddv);

// Where a cell's tap logits z come from: predicted per position from V
// (MUSE, DynamicConv), or one learned kernel per head that every position
// shares (LightConv).
enum class TapSource { predicted, fixed };

// One cell: the filter generator (or fixed kernel), the tap softmax and DropConnect around the data path.
struct DynamicConvCell {
  std::int64_t d = 0, heads = 0, kernel = 0;
  bool causal = false;
  TapSource source = TapSource::predicted;
  // predicted: Wf [H·k, d], Xavier-uniform, no bias. fixed: W [H, k],
  // U(±√(6 / (k + H·k))) (Xavier on PyTorch's [H, 1, k], as fairseq's LightweightConv1dTBC).
  ParamId weight = -1;
  WeightMatrixId matrix;  // Wf as the taps' product reads it (predicted only)

  // Declares "<name>.weight".
  void declare(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads,
               std::int64_t kernel_size, bool is_causal, TapSource tap_source = TapSource::predicted);
  ConvDims dims(std::int64_t batch, std::int64_t t) const { return {batch, t, heads, d, kernel, causal}; }

  struct Saved {
    float* kernel = nullptr;       // [H, k] softmax of the fixed W (fixed taps only), else null
    float* taps = nullptr;         // [B·T, H, k] normalised taps w (pad rows 0)
    float* dropped = nullptr;      // [B·T, H, k] ŵ = w ⊙ keep / (1 − p); == taps without dropout
    std::uint8_t* keep = nullptr;  // [B·T·H·k] DropConnect mask, or null
    float p = 0.0f;
  };
  // v: [B·T] rows of stride ldv; out: rows of stride ldo; out += scale · C.
  // DropConnect with probability tap_dropout when ctx.training (mask from ctx.rng).
  Saved forward(StepContext& ctx, const float* v, std::int64_t ldv, std::int64_t batch, std::int64_t t,
                const std::int32_t* lengths, float tap_dropout, float scale, float* out, std::int64_t ldo) const;
  // Accumulates dWf (fixed taps: dW) and dv (data path and, predicted, filter-generator path) from dout
  // (rows of stride lddo) for out += scale · C. Returns the gate's g = ⟨dout, C⟩.
  double backward(StepContext& ctx, const Saved& saved, const float* v, std::int64_t ldv, std::int64_t batch,
                  std::int64_t t, const std::int32_t* lengths, const float* dout, std::int64_t lddo, float scale,
                  float* dv, std::int64_t lddv) const;

  // Fixed taps: kernel_w [H, k] = softmax(W), copied into taps [rows, H, k].
  void fixed_taps(const ParamStore& params, float* kernel_w, float* taps, std::int64_t rows) const;

  // Incremental decoding (causal cells): position t of n hypotheses.
  // v_now: [n] rows of stride ld_now, this position's v; v_cache: position s of
  // hypothesis i at v_cache + (i·t_max + s)·ld_cache, positions 0..t filled
  // (position t equal to v_now). out[i,:] += scale · C[t,:]; taps before
  // position 0 count as zero (the softmax still runs over all k taps).
  void step(StepContext& ctx, const float* v_now, std::int64_t ld_now, const float* v_cache, std::int64_t ld_cache,
            std::int64_t t_max, std::int64_t n, std::int64_t t, float scale, float* out, std::int64_t ldo) const;
};

// The cells of all kernel sizes and their gate: V → Cmix.
struct MultiScaleConv {
  std::vector<DynamicConvCell> cells;
  ParamId gate = -1;  // α: [n]
  float tap_dropout = 0.0f;

  // Declares "<name>.conv.<i>.weight" [H·k_i, d] and "<name>.gate" [n].
  // The gate starts equal for every kernel (π = 1/n; α = 0, softmax is
  // shift-invariant) and has no weight decay.
  void declare(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads,
               const std::vector<std::int64_t>& kernels, bool is_causal, float tap_dropout_p);
  bool empty() const { return cells.empty(); }

  // π = softmax(α): [n].
  std::vector<float> gate_weights(const ParamStore& params) const;
  void gate_weights(const ParamStore& params, std::vector<float>& pi) const;  // into pi, its capacity reused

  struct Saved {
    std::vector<DynamicConvCell::Saved> cells;
    std::vector<float> pi;  // [n]
  };
  // v: [B·T] rows of stride ldv → out: [B·T] rows of stride ldo, out = Cmix
  // (written: zeros in pad rows); what backward needs into `saved`, whose vectors are reused.
  void forward(StepContext& ctx, const float* v, std::int64_t ldv, std::int64_t batch, std::int64_t t,
               const std::int32_t* lengths, float* out, std::int64_t ldo, Saved& saved) const;
  // dout = ∂L/∂Cmix (rows of stride lddo). Accumulates dα, dWf_i and dv.
  void backward(StepContext& ctx, const Saved& saved, const float* v, std::int64_t ldv, std::int64_t batch,
                std::int64_t t, const std::int32_t* lengths, const float* dout, std::int64_t lddo, float* dv,
                std::int64_t lddv) const;
  // Incremental decoding: out[i,:] = Cmix at position t (written). Arguments as DynamicConvCell::step.
  void step(StepContext& ctx, const float* v_now, std::int64_t ld_now, const float* v_cache, std::int64_t ld_cache,
            std::int64_t t_max, std::int64_t n, std::int64_t t, float* out, std::int64_t ldo) const;
};

}  // namespace attn::nn
