#include "attn/nn/mechanisms/csan/band_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/kernels/rows.h"

namespace attn::nn {

namespace {

// The valid slots of one query row: key heads [s_lo, s_hi), positions [j_lo, j_hi).
// Non-empty whenever i < len: the query's own key (head h, position i) is always in.
struct RowRange {
  std::int64_t s_lo, s_hi, j_lo, j_hi;
};

RowRange row_range(const BandDims& d, std::int64_t h, std::int64_t i, std::int64_t len) {
  const std::int64_t n = (d.head_window - 1) / 2;
  return {std::max<std::int64_t>(0, h - n), std::min<std::int64_t>(d.heads, h + n + 1),
          std::max<std::int64_t>(0, i - d.left), std::min<std::int64_t>(len, i + d.right + 1)};
}

// One query row (b, h, i) against its band: q_row [dh] → out_row [dh] and
// p_row [N, M], both written. Shared by the batch forward and decoding steps.
// With attention dropout, drop's row drop_row is drawn and its weights go
// through dropped [N, M] to v.
void forward_row(const BandDims& d, const float* q_row, const HeadsView& k, const HeadsView& v, std::int64_t b,
                 std::int64_t h, std::int64_t i, std::int64_t len, float scale, float* p_row, float* out_row,
                 const WeightDropout& drop = {}, std::int64_t drop_row = 0, float* dropped = nullptr) {
  const std::int64_t dh = d.head_dim, M = d.width(), n = (d.head_window - 1) / 2;
  std::fill(p_row, p_row + d.slots(), 0.0f);
  std::fill(out_row, out_row + dh, 0.0f);
  if (i >= len) return;  // padded query: output 0
  const RowRange r = row_range(d, h, i, len);
  const std::int64_t count = r.j_hi - r.j_lo, first_slot = r.j_lo - i + d.left;
  // Logits of every valid slot; their max over the whole (s, j) area.
  float max_logit = -std::numeric_limits<float>::infinity();
  for (std::int64_t s = r.s_lo; s < r.s_hi; ++s) {
    float* logits = p_row + (s - h + n) * M + first_slot;  // [count]
    kernels::strided_dots(q_row, k.at(b, r.j_lo) + s * dh, k.row_stride, count, dh, scale, logits);
    for (std::int64_t c = 0; c < count; ++c) max_logit = std::max(max_logit, logits[c]);
  }
  float sum = 0.0f;
  for (std::int64_t s = r.s_lo; s < r.s_hi; ++s) {
    float* e = p_row + (s - h + n) * M + first_slot;
    for (std::int64_t c = 0; c < count; ++c) {
      e[c] = std::exp(e[c] - max_logit);
      sum += e[c];
    }
  }
  // sum ≥ 1 (the max slot contributes exp(0)), so a real row never divides by 0;
  // a NaN or Inf in the inputs propagates, as in every other layer, for training to catch.
  const float inv_sum = 1.0f / sum;
  if (drop.active()) {  // attention dropout: the mask is drawn over the whole normalised row
    for (std::int64_t s = r.s_lo; s < r.s_hi; ++s)
      for (std::int64_t c = 0; c < count; ++c) p_row[(s - h + n) * M + first_slot + c] *= inv_sum;
    drop.draw(drop_row, p_row, dropped);
  }
  for (std::int64_t s = r.s_lo; s < r.s_hi; ++s) {
    float* p = p_row + (s - h + n) * M + first_slot;
    if (!drop.active()) for (std::int64_t c = 0; c < count; ++c) p[c] *= inv_sum;
    kernels::accumulate_rows(drop.active() ? dropped + (p - p_row) : p, v.at(b, r.j_lo) + s * dh, v.row_stride,
                             count, dh, out_row);
  }
}

}  // namespace

void band_attention_forward(const BandDims& d, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                            const std::int32_t* lengths, const WeightDropout& drop) {
  const std::int64_t B = d.batch, H = d.heads, T = d.t, dh = d.head_dim, NM = d.slots();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    std::vector<float> dropped(static_cast<std::size_t>(drop.active() ? NM : 0));  // [N, M]: a row's dropped weights
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        float* p = probs + (b * H + h) * T * NM;  // [T, N, M]
        for (std::int64_t i = 0; i < T; ++i)
          forward_row(d, q.at(b, i) + h * dh, k, v, b, h, i, len, scale, p + i * NM, out.at(b, i) + h * dh, drop,
                      (b * H + h) * T + i, dropped.data());
      }
    }
  }
}

void band_attention_step(const BandDims& d, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                         std::int64_t pos) {
  const std::int64_t B = d.batch, H = d.heads, dh = d.head_dim, NM = d.slots();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      forward_row(d, q.at(b, 0) + h * dh, k, v, b, h, pos, pos + 1, scale, probs + (b * H + h) * NM,
                  out.at(b, 0) + h * dh);
}

// §4.1/§4.2 per row (b, h, i) with g = dout_i^h, over the valid slots (s, j):
//   ga = g · v_j^s,  c = Σ a·ga,  ds = λ·a·(ga − c)
//   dq_i^h += Σ ds·k_j^s,  dk_j^s += ds·q_i^h,  dv_j^s += a·g.
// With attention dropout, ga = (g · v_j^s) ⊙ keep / (1 − p) and dv_j^s += ã·g (ã the dropped weight).
// Pass 1 over (b, h) stores ds (in scratch, the layout of probs) and
// accumulates dq, which only row (b, h, i) writes. Pass 2 over (b, s) GATHERS
// each key row's dk and dv from the query rows (and, in 2D, the query heads
// s−n..s+n) whose band holds it, in a fixed order: no two threads write one
// row, the sums do not depend on the thread count, and each key row is loaded
// and stored once instead of once per query that sees it.
void band_attention_backward(const BandDims& d, HeadsView q, HeadsView k, HeadsView v, const float* probs,
                             HeadsView dout, HeadsView dq, HeadsView dk, HeadsView dv, const std::int32_t* lengths,
                             float* scratch, const WeightDropout& drop) {
  const std::int64_t B = d.batch, H = d.heads, T = d.t, dh = d.head_dim, M = d.width(), NM = d.slots();
  const std::int64_t n = (d.head_window - 1) / 2;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const float keep_scale = drop.active() ? drop.keep_scale() : 1.0f;
  std::vector<float> owned_scratch;
  if (!scratch) {
    owned_scratch.resize(static_cast<std::size_t>(d.probs_size()));
    scratch = owned_scratch.data();
  }

#pragma omp parallel for collapse(2) schedule(dynamic, 1)
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
      for (std::int64_t i = 0; i < len; ++i) {
        const std::int64_t row = (b * H + h) * T + i;
        const float* p_row = probs + row * NM;  // [N, M]
        float* ds_row = scratch + row * NM;     // [N, M]: ga, then ds
        const float* g = dout.at(b, i) + h * dh;
        float* dq_i = dq.at(b, i) + h * dh;
        const RowRange r = row_range(d, h, i, len);
        const std::int64_t count = r.j_hi - r.j_lo, first_slot = r.j_lo - i + d.left;
        float c = 0.0f;  // Σ a·ga over the row
        for (std::int64_t s = r.s_lo; s < r.s_hi; ++s) {
          const std::int64_t at = (s - h + n) * M + first_slot;
          kernels::strided_dots(g, v.at(b, r.j_lo) + s * dh, v.row_stride, count, dh, 1.0f, ds_row + at);
          if (drop.active()) drop.apply(row, ds_row + at, ds_row + at, count, at);
          for (std::int64_t e = 0; e < count; ++e) c += p_row[at + e] * ds_row[at + e];
        }
        for (std::int64_t s = r.s_lo; s < r.s_hi; ++s) {
          const std::int64_t at = (s - h + n) * M + first_slot;
          for (std::int64_t e = 0; e < count; ++e) ds_row[at + e] = scale * p_row[at + e] * (ds_row[at + e] - c);
          kernels::accumulate_rows(ds_row + at, k.at(b, r.j_lo) + s * dh, k.row_stride, count, dh, dq_i);
        }
      }
    }
  }

#pragma omp parallel
  {
    // Coefficients of one (key row, query head) gather: ds and a over the queries i_lo..i_hi−1.
    std::vector<float> ds_coef(static_cast<std::size_t>(M)), a_coef(static_cast<std::size_t>(M));
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t s = 0; s < H; ++s) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        const std::int64_t h_lo = std::max<std::int64_t>(0, s - n), h_hi = std::min<std::int64_t>(H, s + n + 1);
        for (std::int64_t j = 0; j < len; ++j) {
          float* dk_j = dk.at(b, j) + s * dh;
          float* dv_j = dv.at(b, j) + s * dh;
          // Queries whose window holds j: i ∈ [j−right, j+left]; query i sees j in slot j − i + left.
          const std::int64_t i_lo = std::max<std::int64_t>(0, j - d.right),
                             i_hi = std::min<std::int64_t>(len, j + d.left + 1), count = i_hi - i_lo;
          for (std::int64_t h = h_lo; h < h_hi; ++h) {
            // Row (b, h, i), slot (s − h + n, j − i + left): consecutive i are NM − 1 floats apart.
            const std::int64_t first = ((b * H + h) * T + i_lo) * NM + (s - h + n) * M + (j - i_lo + d.left);
            for (std::int64_t e = 0; e < count; ++e) {
              ds_coef[e] = scratch[first + e * (NM - 1)];
              a_coef[e] = probs[first + e * (NM - 1)];
            }
            if (drop.active())  // the weights the forward applied; keep is laid out like probs
              for (std::int64_t e = 0; e < count; ++e)
                a_coef[e] = drop.keep[first + e * (NM - 1)] ? a_coef[e] * keep_scale : 0.0f;
            kernels::accumulate_rows(ds_coef.data(), q.at(b, i_lo) + h * dh, q.row_stride, count, dh, dk_j);
            kernels::accumulate_rows(a_coef.data(), dout.at(b, i_lo) + h * dh, dout.row_stride, count, dh, dv_j);
          }
        }
      }
    }
  }
}

}  // namespace attn::nn
