// The scalar pieces of one Fast-DiSA head, shared by the training passes and
// incremental decoding: the token2token weights of one row, the direct
// softmax of one (query, feature) pair that stands in where the factorised
// denominator underflows and attention dropout's factors of one head and mask
// of one term (the logistic function and the bias gradients are
// directional/head_math.h's).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/directional/head_math.h"
#include "attn/nn/mechanisms/fast_disa/feature_softmax.h"

namespace attn::nn::fast_disa {

// Below this the factorised form hands a (query, feature) pair to the direct
// form. D = Σ_j A_ij E_jk with one shift per feature (the max of S over all
// valid keys), so an S spread of ~87 can leave e^(S − shift) = 0 at every key a
// query may see — D = 0 where a key exists. The floor leaves terms lost to
// underflow below FLT_MIN / 2^-64 ≈ 2e-19 of D; it is reached only by spreads
// of log φ(R) + S over ~44, rare enough that the direct path costs nothing.
inline constexpr float kFactorisedMinDenominator = 0x1p-64f;

using directional::sigmoid;
using directional::add_column_sums;

// log σ(z) = −log(1 + e^−z), without overflow on either side.
inline float log_sigmoid(float z) { return z >= 0.0f ? -std::log1p(std::exp(-z)) : z - std::log1p(std::exp(z)); }

// R_j = q · k_j / √d_h for n keys; k: [n, d_h] with row stride ldk.
inline void t2t_logits(const float* q, const float* k, std::int64_t ldk, std::int64_t dh, float scale, std::int64_t n,
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
inline float direct_feature_softmax(const float* r, const float* s, std::int64_t lds, const float* v, std::int64_t ldv,
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
inline float token2token_row(float* row, std::int64_t first, std::int64_t end, bool use_sigmoid) {
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

// One thread's room for a head's dropped factors, Ã: [T, T] and Ẽ: [T, d_h]
// (none without dropout), kept from call to call so a step allocates nothing,
// and the FactorDropout the feature-wise softmax reads them through.
struct DroppedFactors {
  std::vector<float> a, e;

  void reset(bool dropout, std::int64_t t, std::int64_t dh) {
    a.assign(static_cast<std::size_t>(dropout ? t * t : 0), 0.0f);
    e.assign(static_cast<std::size_t>(dropout ? t * dh : 0), 0.0f);
  }
  // With the masks of the head whose first row is row0 in drop_a (r_A, a row
  // of T keys per query) and drop_e (r_E, a row of d_h features per key).
  FactorDropout view(const WeightDropout& drop_a, const WeightDropout& drop_e, std::int64_t row0) const {
    return {a.data(),
            drop_a.width,
            e.data(),
            drop_e.width,
            drop_a.keep + row0 * drop_a.width,
            drop_a.width,
            drop_e.keep + row0 * drop_e.width,
            drop_e.width,
            drop_a.keep_scale()};
  }
};

// m = r_A,ij r_E,jk / (1 − p): what attention dropout leaves of the term of key j
// in the pair (query i, feature k).
inline float pair_mask(const FactorDropout& drop, std::int64_t i, std::int64_t j, std::int64_t k) {
  return (drop.keep_a[i * drop.ldka + j] ? drop.scale : 0.0f) * (drop.keep_e[j * drop.ldke + k] ? drop.scale : 0.0f);
}

}  // namespace attn::nn::fast_disa
