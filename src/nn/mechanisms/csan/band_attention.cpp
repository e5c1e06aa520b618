#include "attn/nn/mechanisms/csan/band_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/kernels/rows.h"

namespace attn::nn {

namespace {

// Query positions per parallel task: enough work per task, and tasks enough for every thread when B is small.
constexpr std::int64_t kPositionBlock = 64;

// The valid slots of one query row: head slots [o_lo, o_hi) (slot o reads key
// head key_head(o) and value head value_head(o)), positions [j_lo, j_hi).
// Non-empty whenever i < len: the query's own key (head h, position i) is always in.
struct RowRange {
  std::int64_t o_lo, o_hi, j_lo, j_hi;
};

RowRange row_range(const BandDims& d, std::int64_t h, std::int64_t i, std::int64_t len) {
  const std::int64_t n = (d.head_window - 1) / 2;
  const std::int64_t j_lo = std::max<std::int64_t>(0, i - d.left), j_hi = std::min<std::int64_t>(len, i + d.right + 1);
  if (d.wrap_heads) return {0, d.head_window, j_lo, j_hi};
  return {std::max<std::int64_t>(0, n - h), std::min<std::int64_t>(d.head_window, d.heads - h + n), j_lo, j_hi};
}

// The key and value heads of head slot o of query head h.
std::int64_t key_head(const BandDims& d, std::int64_t h, std::int64_t o) {
  const std::int64_t s = h + o - (d.head_window - 1) / 2;
  return d.wrap_heads ? ((s % d.heads) + d.heads) % d.heads : s;
}
std::int64_t value_head(const BandDims& d, std::int64_t h, std::int64_t o) {
  const std::int64_t s = h + o - (d.head_window - 1) / 2;
  return d.wrap_heads ? std::clamp<std::int64_t>(s, 0, d.heads - 1) : s;
}

// One query row (b, h, i) against its band: q_row [dh] → out_row [dh] and
// p_row [N, M], both written. Shared by the batch forward and decoding steps.
// With attention dropout, drop's row drop_row is drawn and its weights go
// through dropped [N, M] to v.
void forward_row(const BandDims& d, const float* q_row, const HeadsView& k, const HeadsView& v, std::int64_t b,
                 std::int64_t h, std::int64_t i, std::int64_t len, float scale, float* p_row, float* out_row,
                 const WeightDropout& drop = {}, std::int64_t drop_row = 0, float* dropped = nullptr) {
  const std::int64_t dh = d.head_dim, M = d.width();
  std::fill(p_row, p_row + d.slots(), 0.0f);
  std::fill(out_row, out_row + dh, 0.0f);
  if (i >= len) return;  // padded query: output 0
  const RowRange r = row_range(d, h, i, len);
  const std::int64_t count = r.j_hi - r.j_lo, first_slot = r.j_lo - i + d.left;
  // Logits of every valid slot; their max over the whole (s, j) area.
  float max_logit = -std::numeric_limits<float>::infinity();
  for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
    float* logits = p_row + o * M + first_slot;  // [count]
    kernels::strided_dots(q_row, k.at(b, r.j_lo) + key_head(d, h, o) * dh, k.row_stride, count, dh, scale, logits);
    for (std::int64_t c = 0; c < count; ++c) max_logit = std::max(max_logit, logits[c]);
  }
  float sum = 0.0f;
  for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
    float* e = p_row + o * M + first_slot;
    for (std::int64_t c = 0; c < count; ++c) {
      e[c] = std::exp(e[c] - max_logit);
      sum += e[c];
    }
  }
  // sum ≥ 1 (the max slot contributes exp(0)), so a real row never divides by 0;
  // a NaN or Inf in the inputs propagates, as in every other layer, for training to catch.
  const float inv_sum = 1.0f / sum;
  if (drop.active()) {  // attention dropout: the mask is drawn over the whole normalised row
    for (std::int64_t o = r.o_lo; o < r.o_hi; ++o)
      for (std::int64_t c = 0; c < count; ++c) p_row[o * M + first_slot + c] *= inv_sum;
    drop.draw(drop_row, p_row, dropped);
  }
  for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
    float* p = p_row + o * M + first_slot;
    if (!drop.active())
      for (std::int64_t c = 0; c < count; ++c) p[c] *= inv_sum;
    kernels::accumulate_rows(drop.active() ? dropped + (p - p_row) : p, v.at(b, r.j_lo) + value_head(d, h, o) * dh,
                             v.row_stride, count, dh, out_row);
  }
}

}  // namespace

void band_attention_forward(const BandDims& d, HeadsView q, HeadsView k, HeadsView v, HeadsView out, float* probs,
                            const std::int32_t* lengths, const WeightDropout& drop) {
  const std::int64_t B = d.batch, H = d.heads, T = d.t, dh = d.head_dim, NM = d.slots();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
  {
    // [N, M]: a row's dropped weights. Kept per thread from call to call: a step allocates nothing.
    static thread_local std::vector<float> dropped;
    dropped.assign(static_cast<std::size_t>(drop.active() ? NM : 0), 0.0f);
    // Positions outer, heads inner: a position's q, k and v rows of all heads
    // are contiguous, so the band's rows stream through the cache in order
    // instead of one head's slice of every row at a time.
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t i0 = 0; i0 < T; i0 += kPositionBlock) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        for (std::int64_t i = i0; i < std::min(T, i0 + kPositionBlock); ++i)
          for (std::int64_t h = 0; h < H; ++h) {
            const std::int64_t row = (b * H + h) * T + i;
            forward_row(d, q.at(b, i) + h * dh, k, v, b, h, i, len, scale, probs + row * NM, out.at(b, i) + h * dh,
                        drop, row, dropped.data());
          }
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

// docs/mechanisms-spec.md §4.1, §4.2 per row (b, h, i) with g = dout_i^h, over the valid slots (s, j):
//   ga = g · v_j^s,  c = Σ a·ga,  ds = λ·a·(ga − c)
//   dq_i^h += Σ ds·k_j^s,  dk_j^s += ds·q_i^h,  dv_j^s += a·g.
// With attention dropout, ga = (g · v_j^s) ⊙ keep / (1 − p) and dv_j^s += ã·g (ã the dropped weight).
// Pass 1 over (b, query blocks) stores ds (in scratch, the layout of probs) and
// accumulates dq, which only row (b, h, i) writes. Pass 2 over (b, key blocks) GATHERS
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
    for (std::int64_t i0 = 0; i0 < T; i0 += kPositionBlock) {
      const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
      for (std::int64_t i = i0; i < std::min(len, i0 + kPositionBlock); ++i) {
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t row = (b * H + h) * T + i;
          const float* p_row = probs + row * NM;  // [N, M]
          float* ds_row = scratch + row * NM;     // [N, M]: ga, then ds
          const float* g = dout.at(b, i) + h * dh;
          float* dq_i = dq.at(b, i) + h * dh;
          const RowRange r = row_range(d, h, i, len);
          const std::int64_t count = r.j_hi - r.j_lo, first_slot = r.j_lo - i + d.left;
          float c = 0.0f;  // Σ a·ga over the row
          for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
            const std::int64_t at = o * M + first_slot;
            kernels::strided_dots(g, v.at(b, r.j_lo) + value_head(d, h, o) * dh, v.row_stride, count, dh, 1.0f,
                                  ds_row + at);
            if (drop.active()) drop.apply(row, ds_row + at, ds_row + at, count, at);
            for (std::int64_t e = 0; e < count; ++e) c += p_row[at + e] * ds_row[at + e];
          }
          for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
            const std::int64_t at = o * M + first_slot;
            for (std::int64_t e = 0; e < count; ++e) ds_row[at + e] = scale * p_row[at + e] * (ds_row[at + e] - c);
            kernels::accumulate_rows(ds_row + at, k.at(b, r.j_lo) + key_head(d, h, o) * dh, k.row_stride, count, dh,
                                     dq_i);
          }
        }
      }
    }
  }

#pragma omp parallel
  {
    // Coefficients of one (key row, query head slot) gather: ds or a over the queries i_lo..i_hi−1.
    // Kept per thread from call to call: a step allocates nothing.
    static thread_local std::vector<float> coef;
    coef.assign(static_cast<std::size_t>(M), 0.0f);
    // The (query head, slot) pairs that read head s, by ascending query head:
    // as keys (dk) and as values (dv), flattened; head s's are at
    // [first[s], first[s + 1]). Without wrap_heads they are the same pairs,
    // h ∈ [s−n, s+n], slot s − h + n.
    static thread_local std::vector<std::int64_t> key_pairs, value_pairs, key_first, value_first;
    key_pairs.clear();
    value_pairs.clear();
    key_first.assign(1, 0);
    value_first.assign(1, 0);
    for (std::int64_t s = 0; s < H; ++s) {
      const std::int64_t h_first = d.wrap_heads ? 0 : std::max<std::int64_t>(0, s - n),
                         h_end = d.wrap_heads ? H : std::min<std::int64_t>(H, s + n + 1);
      for (std::int64_t h = h_first; h < h_end; ++h) {
        const RowRange r = row_range(d, h, 0, 1);
        for (std::int64_t o = r.o_lo; o < r.o_hi; ++o) {
          if (key_head(d, h, o) == s) key_pairs.insert(key_pairs.end(), {h, o});
          if (value_head(d, h, o) == s) value_pairs.insert(value_pairs.end(), {h, o});
        }
      }
      key_first.push_back(static_cast<std::int64_t>(key_pairs.size()));
      value_first.push_back(static_cast<std::int64_t>(value_pairs.size()));
    }
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t j0 = 0; j0 < T; j0 += kPositionBlock) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        for (std::int64_t j = j0; j < std::min(len, j0 + kPositionBlock); ++j) {
          // Queries whose window holds j: i ∈ [j−right, j+left]; query i sees j in slot j − i + left.
          const std::int64_t i_lo = std::max<std::int64_t>(0, j - d.right),
                             i_hi = std::min<std::int64_t>(len, j + d.left + 1), count = i_hi - i_lo;
          // Row (b, h, i), slot (o, j − i + left): consecutive i are NM − 1 floats apart. With
          // attention dropout dv gathers the weights the forward applied (keep is laid out like probs).
          auto gather = [&](const float* from, bool applied_weights, std::int64_t h, std::int64_t o,
                            const HeadsView& rows, float* to) {
            const std::int64_t first = ((b * H + h) * T + i_lo) * NM + o * M + (j - i_lo + d.left);
            for (std::int64_t e = 0; e < count; ++e) coef[e] = from[first + e * (NM - 1)];
            if (applied_weights && drop.active())
              for (std::int64_t e = 0; e < count; ++e)
                coef[e] = drop.keep[first + e * (NM - 1)] ? coef[e] * keep_scale : 0.0f;
            kernels::accumulate_rows(coef.data(), rows.at(b, i_lo) + h * dh, rows.row_stride, count, dh, to);
          };
          for (std::int64_t s = 0; s < H; ++s) {
            for (std::int64_t p = key_first[s]; p < key_first[s + 1]; p += 2)
              gather(scratch, false, key_pairs[p], key_pairs[p + 1], q, dk.at(b, j) + s * dh);
            for (std::int64_t p = value_first[s]; p < value_first[s + 1]; p += 2)
              gather(probs, true, value_pairs[p], value_pairs[p + 1], dout, dv.at(b, j) + s * dh);
          }
        }
      }
    }
  }
}

}  // namespace attn::nn
