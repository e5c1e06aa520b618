// What bench_length counts from a config rather than measures: the FLOPs of
// a training step per target token (the GFLOP/s yardstick) and a generous
// estimate of the step arena's bytes (to skip a cell before it asks for more
// memory than the machine has).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/model/config.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/lightconv/lightconv_mixer.h"
#include "attn/nn/token_mixer.h"

namespace attn::bench::length {

// The yardstick: FLOPs of a training step, counted from the config.
//
// Matrix products count 2·m·n·k, and a training step 3× the forward (the
// backward of a product is two products of the same size). Attention counts
// what the kernels compute: global attention (encoder, causal decoder, cross,
// MUSE's branch) and Fast-DiSA form full T×T score matrices and mask them
// afterwards, so they count T² per head whatever the mask (DiSA computes only
// the allowed pairs of its T×T×d_h tensors, but counts T² too); ConvSAN's band
// counts only the window slots inside the sequence (and, in 2D, the
// neighbouring heads that exist). Element-wise work (softmax, LayerNorm,
// activations, dropout, Adam) is left out: it is small next to the products
// and is not what GFLOP/s measures.

// Keys in the window [i − left, i + right] ∩ [0, T), averaged over queries i.
inline double band_keys_per_query(std::int64_t t, std::int64_t left, std::int64_t right) {
  double keys = 0;
  for (std::int64_t i = 0; i < t; ++i)
    keys += static_cast<double>(std::min(t - 1, i + right) - std::max<std::int64_t>(0, i - left) + 1);
  return keys / static_cast<double>(t);
}

// Heads in [h − n, h + n] that exist, averaged over h (all N with the authors' wrap).
inline double band_heads_per_head(std::int64_t heads, std::int64_t head_window, bool wrap) {
  if (wrap) return static_cast<double>(head_window);
  const std::int64_t n = (head_window - 1) / 2;
  double count = 0;
  for (std::int64_t h = 0; h < heads; ++h)
    count += static_cast<double>(std::min(heads - 1, h + n) - std::max<std::int64_t>(0, h - n) + 1);
  return count / static_cast<double>(heads);
}

// Forward FLOPs per position of one self-attention mixer over sequences of T
// positions; NaN for a mechanism this count does not know.
inline double mixer_forward_flops(const nn::MixerSpec& spec, std::int64_t t) {
  const double d = static_cast<double>(spec.d), heads = static_cast<double>(spec.heads), dh = d / heads;
  const double T = static_cast<double>(t);
  const double qkv = 2 * d * 3 * d, out = 2 * d * d;
  const double global = 2 * T * d + 2 * T * d;  // q·kᵀ and P·v over all heads
  if (spec.mechanism == "mha") return qkv + global + out;
  if (spec.mechanism == "csan") {
    const auto window = nn::option_value<std::int64_t>(spec, "csan_window");
    const std::int64_t half = (window - 1) / 2;
    // The causal form (our decoder extension) is 1D over [i − half, i].
    const auto head_window = spec.causal ? 1 : nn::option_value<std::int64_t>(spec, "csan_head_window");
    const bool wrap = nn::option_value<std::string>(spec, "csan_head_boundary") == "wrap";
    const double slots = band_keys_per_query(t, half, spec.causal ? 0 : half) *
                         band_heads_per_head(spec.heads, head_window, wrap);
    return qkv + 2 * 2 * dh * slots * heads + out;  // q·k and p·v per slot and head
  }
  if (spec.mechanism == "muse") {
    const auto kernels = nn::option_value<std::vector<std::int64_t>>(spec, "muse_kernels");
    if (kernels.empty()) return qkv + global + out;  // MUSE-simple
    double flops = qkv + global + 2 * (2 * d) * d;   // output projection reads [Att ; Cmix]
    if (nn::option_value<bool>(spec, "muse_separate_projection")) flops += 2 * d * d;
    for (std::int64_t k : kernels) flops += 2 * d * heads * static_cast<double>(k) + 2 * static_cast<double>(k) * d;
    return flops;  // per cell: the filter generator [H·k, d], then k taps per channel
  }
  if (spec.mechanism == "lightconv" || spec.mechanism == "dynamicconv") {
    // GLU input projection [2d, d], k taps per channel, output [d, d]; DynamicConv
    // adds the filter generator [H·k, d] on every position.
    const auto k = static_cast<double>(nn::lightconv_kernel(spec));
    double flops = 2 * d * 2 * d + 2 * k * d + out;
    if (spec.mechanism == "dynamicconv") flops += 2 * d * heads * k;
    return flops;
  }
  if (spec.mechanism == "fastdisa") {
    // Per head: R = q·kᵀ [T×T×d_h]; A·[E | v⊙E] [T×T×2d_h]; S = ELU(v W1) W2 [2 × d_h×d_h];
    // the fusion gate [2d_h → d_h].
    double flops = qkv + 2 * T * d + 2 * T * 2 * d + 2 * 2 * dh * d + out;
    if (nn::option_value<bool>(spec, "disa_gate")) flops += 2 * 2 * dh * d;
    return flops;
  }
  if (spec.mechanism == "disa") {
    // v and o [d×d each]; per head the query and key terms [2 × d_h×d_h] and the fusion gate
    // [2d_h → d_h]; then per allowed pair and feature the sum Σ_j P_ijk v_jk (2 FLOPs; the
    // compatibility's add, tanh, exp and the softmax are element-wise, left out as elsewhere,
    // though here they are T²·d of them and most of the time).
    return 2 * d * d + 2 * T * d + 2 * 2 * dh * d + 2 * 2 * dh * d + out;
  }
  return std::nan("");
}

// Training FLOPs per target token at source = target = T tokens.
inline double flops_per_token(const model::ModelConfig& c, std::int64_t t) {
  const double d = static_cast<double>(c.dim), ffn = 2 * 2 * d * static_cast<double>(c.ffn_dim);
  const double T = static_cast<double>(t);
  double forward = 0;
  for (std::int64_t layer = 0; layer < c.enc_layers; ++layer)
    forward += mixer_forward_flops(c.encoder_mixer(layer), t) + ffn;
  // Cross-attention: q and o on the target, k and v on the source (as many tokens), T² scores.
  const double cross = 2 * d * d + 2 * d * 2 * d + 4 * T * d + 2 * d * d;
  for (std::int64_t layer = 0; layer < c.dec_layers; ++layer)
    forward += mixer_forward_flops(c.decoder_self_mixer(layer), t) + cross + ffn;
  forward += 2 * d * static_cast<double>(c.vocab_size);  // output projection
  return 3 * forward;
}

// ---------------------------------------------------------------------------
// Memory: a generous estimate of the step arena, to skip a cell before it
// asks for more than the machine has. Checked against the measured
// high-water in the JSON ("step_mb_estimate").

inline bool is_global(const nn::MixerSpec& spec) {
  return spec.mechanism == "mha" || spec.mechanism == "muse" || spec.mechanism == "fastdisa";
}

inline double estimate_step_bytes(const model::ModelConfig& c, std::int64_t batch, std::int64_t t, int threads) {
  const double B = static_cast<double>(batch), T = static_cast<double>(t), H = static_cast<double>(c.heads);
  const double rows = B * T, d = static_cast<double>(c.dim);
  // Each global site saves its [B, H, T, T] weights; backward adds a T×T
  // workspace per thread. A band site keeps [B, H, T, N·M] twice. A DiSA site
  // keeps two [B, H, T, T, d_h] tensors (so T = 1024 at 4096 tokens, ~26 GB per
  // encoder layer, does not fit where 16 GB is the limit: the cell says so).
  double quadratic = 0;
  auto site = [&](const nn::MixerSpec& spec) {
    if (spec.mechanism == "disa") {  // tanh(a/c) and P, [B, H, T, T, d_h] each, saved for the backward
      quadratic += 2 * B * T * T * d;
    } else if (is_global(spec)) {
      quadratic += B * H * T * T + std::max(1, threads) * 2 * T * T;
    } else if (spec.mechanism == "lightconv" || spec.mechanism == "dynamicconv") {
      // Taps, dropped taps and their gradient [B·T, H, k]; the GLU's [B·T, 2d] is in `linear`.
      quadratic += 3 * B * H * T * static_cast<double>(nn::lightconv_kernel(spec));
    } else {
      const double window = static_cast<double>(nn::option_value<std::int64_t>(spec, "csan_window"));
      quadratic += 2 * B * H * T * window * 3;
    }
  };
  for (std::int64_t layer = 0; layer < c.enc_layers; ++layer) site(c.encoder_mixer(layer));
  for (std::int64_t layer = 0; layer < c.dec_layers; ++layer) {
    site(c.decoder_self_mixer(layer));
    quadratic += B * H * T * T;  // cross-attention weights
  }
  const double layers = static_cast<double>(c.enc_layers + c.dec_layers);
  const double linear = layers * rows * (16 * d + 2 * static_cast<double>(c.ffn_dim)) +
                        2 * rows * static_cast<double>(c.vocab_size);
  return 4.0 * 1.25 * (quadratic + linear);
}

}  // namespace attn::bench::length
