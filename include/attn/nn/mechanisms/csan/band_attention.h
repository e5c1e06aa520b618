// Banded ("windowed") scaled dot-product attention over heads: the kernel of
// Convolutional Self-Attention (docs/mechanisms-spec.md §2, §4.1, §4.2).
//
// Query i of head h attends keys j ∈ [i−left, i+right] ∩ [0, length_b) of the
// key/value heads s ∈ [h−n, h+n] ∩ [0, H), head_window = 2n+1, with ONE
// softmax jointly over all (s, j) slots. head_window 1 is 1D-CSAN (head h
// only), 3 is the paper's 2D area. Heads outside 0..H−1 are dropped for keys
// and values alike ("truncate", §2.3) — or, with wrap_heads, as the authors'
// code does (§2.3): the key head wraps around (h+o−n mod H) while the value
// head is clamped to 0..H−1, so every slot is valid.
//
// The weights are stored as a band, never T×T: probs [B, H, T, N, M] with
// N = head_window, M = left+right+1. Slot (s_off, o) of row (b, h, i) is key
// head s = h + s_off − n (wrapped with wrap_heads) at position j = i + o − left;
// invalid slots (out of range, padded, dropped head) hold exactly 0. Cost
// O(B·H·T·N·M·d_h).
//
// Same tensor conventions as attention_forward (attention.h): element
// (b, t, h, x) of a HeadsView is at data[b·batch_stride + t·row_stride + h·d_h + x].
#pragma once
#include <cstdint>

#include "attn/nn/attention.h"

namespace attn::nn {

struct BandDims {
  std::int64_t batch = 0, heads = 0, head_dim = 0, t = 0;
  std::int64_t left = 0, right = 0;  // encoder: (window−1)/2 each side; causal: left = (window−1)/2, right = 0
  std::int64_t head_window = 1;      // N = 2n+1: 1 = 1D, 3 = 2D
  bool wrap_heads = false;           // the authors' boundary heads: keys wrap, values clamp

  std::int64_t width() const { return left + right + 1; }       // M: positions per head slot
  std::int64_t slots() const { return head_window * width(); }  // N·M: one softmax row
  std::int64_t probs_size() const { return batch * heads * t * slots(); }
};

// probs: [batch, heads, t, head_window, width] (written). Rows t ≥ lengths[b]
// get output 0 and probs 0; no padded key is ever read. out is written.
// drop (attention dropout, attention.h): inactive, or rows [batch·heads·t]
// of width slots(), laid out like probs; active, each real row draws its
// mask and the dropped weights multiply v, while probs stay undropped.
void band_attention_forward(const BandDims& dims, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                            const std::int32_t* lengths, const WeightDropout& drop = {});

// Accumulates dq, dk, dv from dout, given the forward's probs (and drop). With
// head_window > 1 gradients cross heads (dk, dv of head s gather from the
// query heads h with s in their area, §4.2); the result is bitwise the same
// for any thread count. scratch: dims.probs_size() floats of workspace (the
// score gradients, laid out like probs); nullptr allocates it here.
void band_attention_backward(const BandDims& dims, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                             HeadsView dout, HeadsView dq, HeadsView dk, HeadsView dv, const std::int32_t* lengths,
                             float* scratch = nullptr, const WeightDropout& drop = {});

// Incremental decoding: ONE query per sequence, at position `pos`, against
// keys/values 0..pos of k, v (e.g. a KV cache [B, t_max, ·]); keys beyond
// pos are never read. q.at(b, 0), out.at(b, 0): that query's row. probs:
// [batch, heads, head_window, width] (written). The arithmetic is the same as
// row `pos` of band_attention_forward with lengths = pos+1, so the two agree
// bitwise on equal inputs. dims.t is unused.
void band_attention_step(const BandDims& dims, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                         std::int64_t pos);

}  // namespace attn::nn
