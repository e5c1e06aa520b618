// Dropout. Element i keeps when the uniform from word i % 4 of Philox block
// counter + i / 4 is ≥ p: a pure function of (seed, counter, i), so the mask
// is the same for any thread count and any ISA.
#include "isa.h"

#include <algorithm>
#include <cstdint>

#include "attn/kernels/dropout.h"

#include "kernels.h"
#include "parallel_for.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {

constexpr int kBatch = 16;  // Philox blocks per batch: 64 words, 64 elements

// Philox-4x32-10: the same function as attn::philox4x32 (the tests check the
// two agree), for the kBatch counters first_counter + k. words: [4 · kBatch],
// word w of block k at 4k + w, the order the elements use them in.
constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

#if ATTN_ISA_LEVEL >= 1
// Vectorised across blocks: lane k of the vectors c0..c3 holds block k's
// state. x86 has no vector "high half of a 32×32 product": mul_epu32 gives the
// full 64-bit products of the even 32-bit lanes, the odd lanes go through a
// second multiply after a shift, and blends put the halves back. At the end a
// 4×4 transpose puts each block's four words next to each other.
#if ATTN_ISA_LEVEL == 2
using Lanes = __m512i;
constexpr int kLaneCount = 16;
// The zero-masked forms with a full mask are the plain instructions; the
// unmasked intrinsics trip GCC 12's -Wmaybe-uninitialized.
constexpr __mmask8 kAll8 = 0xFF;
constexpr __mmask16 kAll16 = 0xFFFF;
inline Lanes splat_u32(std::uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
inline Lanes iota() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
inline Lanes add(Lanes a, Lanes b) { return _mm512_add_epi32(a, b); }
inline Lanes bit_xor(Lanes a, Lanes b) { return _mm512_xor_si512(a, b); }
inline Lanes load_u32(const std::uint32_t* p) { return _mm512_loadu_si512(p); }
inline void mul_wide(Lanes c, Lanes m, Lanes& hi, Lanes& lo) {
  const Lanes even = _mm512_maskz_mul_epu32(kAll8, c, m);
  const Lanes odd = _mm512_maskz_mul_epu32(kAll8, _mm512_maskz_srli_epi64(kAll8, c, 32), m);
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_maskz_srli_epi64(kAll8, even, 32), odd);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_maskz_slli_epi64(kAll8, odd, 32));
}
// out: [64]: the words of blocks 0..15 in block order.
inline void store_interleaved(std::uint32_t* out, Lanes c0, Lanes c1, Lanes c2, Lanes c3) {
  // Within each 128-bit quarter q, u_m gets block 4q + m's four words.
  const Lanes t0 = _mm512_maskz_unpacklo_epi32(kAll16, c0, c1), t1 = _mm512_maskz_unpackhi_epi32(kAll16, c0, c1);
  const Lanes t2 = _mm512_maskz_unpacklo_epi32(kAll16, c2, c3), t3 = _mm512_maskz_unpackhi_epi32(kAll16, c2, c3);
  const Lanes u0 = _mm512_maskz_unpacklo_epi64(kAll8, t0, t2), u1 = _mm512_maskz_unpackhi_epi64(kAll8, t0, t2);
  const Lanes u2 = _mm512_maskz_unpacklo_epi64(kAll8, t1, t3), u3 = _mm512_maskz_unpackhi_epi64(kAll8, t1, t3);
  // Output quarter 4q + m is u_m's quarter q: transpose the quarters.
  const Lanes low01 = _mm512_maskz_shuffle_i32x4(kAll16, u0, u1, 0x44),
              low23 = _mm512_maskz_shuffle_i32x4(kAll16, u2, u3, 0x44);
  const Lanes high01 = _mm512_maskz_shuffle_i32x4(kAll16, u0, u1, 0xEE),
              high23 = _mm512_maskz_shuffle_i32x4(kAll16, u2, u3, 0xEE);
  _mm512_storeu_si512(out, _mm512_maskz_shuffle_i32x4(kAll16, low01, low23, 0x88));
  _mm512_storeu_si512(out + 16, _mm512_maskz_shuffle_i32x4(kAll16, low01, low23, 0xDD));
  _mm512_storeu_si512(out + 32, _mm512_maskz_shuffle_i32x4(kAll16, high01, high23, 0x88));
  _mm512_storeu_si512(out + 48, _mm512_maskz_shuffle_i32x4(kAll16, high01, high23, 0xDD));
}
#else
using Lanes = __m256i;
constexpr int kLaneCount = 8;
inline Lanes splat_u32(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
inline Lanes iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
inline Lanes add(Lanes a, Lanes b) { return _mm256_add_epi32(a, b); }
inline Lanes bit_xor(Lanes a, Lanes b) { return _mm256_xor_si256(a, b); }
inline Lanes load_u32(const std::uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void mul_wide(Lanes c, Lanes m, Lanes& hi, Lanes& lo) {
  const Lanes even = _mm256_mul_epu32(c, m);
  const Lanes odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}
// out: [32]: the words of blocks 0..7 in block order.
inline void store_interleaved(std::uint32_t* out, Lanes c0, Lanes c1, Lanes c2, Lanes c3) {
  // Within each 128-bit half h, u_m gets block 4h + m's four words.
  const Lanes t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
  const Lanes t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
  const Lanes u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const Lanes u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  auto* p = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(p, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256(p + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256(p + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256(p + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}
#endif

inline void philox_batch(std::uint64_t key, std::uint64_t first_counter, std::uint32_t* words) {
  const std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  const Lanes mul0 = splat_u32(kMul0), mul1 = splat_u32(kMul1);
  for (int base = 0; base < kBatch; base += kLaneCount) {
    const std::uint64_t start = first_counter + static_cast<std::uint64_t>(base);
    const std::uint32_t start_low = static_cast<std::uint32_t>(start);
    Lanes c0, c1;
    if (start_low <= 0xFFFFFFFFu - (kLaneCount - 1)) {  // the low words do not wrap within the lanes
      c0 = add(splat_u32(start_low), iota());
      c1 = splat_u32(static_cast<std::uint32_t>(start >> 32));
    } else {
      std::uint32_t low[kLaneCount], high[kLaneCount];
      for (int k = 0; k < kLaneCount; ++k) {
        low[k] = static_cast<std::uint32_t>(start + static_cast<std::uint64_t>(k));
        high[k] = static_cast<std::uint32_t>((start + static_cast<std::uint64_t>(k)) >> 32);
      }
      c0 = load_u32(low);
      c1 = load_u32(high);
    }
    Lanes c2 = splat_u32(0), c3 = splat_u32(0);
    std::uint32_t round_k0 = k0, round_k1 = k1;
    for (int round = 0; round < 10; ++round) {
      Lanes hi0, lo0, hi1, lo1;
      mul_wide(c0, mul0, hi0, lo0);
      mul_wide(c2, mul1, hi1, lo1);
      c0 = bit_xor(bit_xor(hi1, c1), splat_u32(round_k0));
      c2 = bit_xor(bit_xor(hi0, c3), splat_u32(round_k1));
      c1 = lo1;
      c3 = lo0;
      round_k0 += kWeyl0;
      round_k1 += kWeyl1;
    }
    store_interleaved(words + 4 * base, c0, c1, c2, c3);
  }
}
#else
inline void philox_batch(std::uint64_t key, std::uint64_t first_counter, std::uint32_t* words) {
  for (int k = 0; k < kBatch; ++k) {
    std::uint32_t c0 = static_cast<std::uint32_t>(first_counter + static_cast<std::uint64_t>(k));
    std::uint32_t c1 = static_cast<std::uint32_t>((first_counter + static_cast<std::uint64_t>(k)) >> 32);
    std::uint32_t c2 = 0, c3 = 0;
    std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * c0;
      const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * c2;
      const std::uint32_t next_c0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
      const std::uint32_t next_c2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<std::uint32_t>(p1);
      c3 = static_cast<std::uint32_t>(p0);
      c0 = next_c0;
      c2 = next_c2;
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    words[4 * k] = c0;
    words[4 * k + 1] = c1;
    words[4 * k + 2] = c2;
    words[4 * k + 3] = c3;
  }
}
#endif

// uniform_from_bits(bits) ≥ p, in integers: (bits >> 8) · 2^-24 ≥ p exactly
// when (bits >> 8) ≥ ⌈p · 2^24⌉.
inline std::uint32_t keep_threshold(float p) {
  const double scaled = static_cast<double>(p) * 16777216.0;
  const double ceiling = static_cast<double>(static_cast<std::int64_t>(scaled));
  return static_cast<std::uint32_t>(ceiling < scaled ? ceiling + 1.0 : ceiling);
}
}  // namespace

void dropout_forward(const float* x, float* y, std::uint8_t* keep, std::int64_t n, float p, std::uint64_t seed,
                     std::uint64_t counter) {
  if (p <= 0.0f) {
    if (y != x) std::copy(x, x + n, y);
    std::fill(keep, keep + n, std::uint8_t{1});
    return;
  }
  if (p >= 1.0f) {  // every element dropped; 1 / (1 − p) would be inf
    std::fill(y, y + n, 0.0f);
    std::fill(keep, keep + n, std::uint8_t{0});
    return;
  }
  const std::uint32_t threshold = keep_threshold(p);
  // Below, x · (kept ? scale : 0) rather than kept ? x · scale : 0: GCC does
  // not if-convert a conditional multiply for AVX2. (A dropped ±inf or NaN
  // thus gives NaN, as x ⊙ mask would.)
  const float keep_scale = 1.0f / (1.0f - p);
  constexpr std::int64_t kBatchElements = 4 * kBatch;
  const std::int64_t batches = (n + kBatchElements - 1) / kBatchElements;
  parallel_for(batches, n, [=](std::int64_t batch) {
    std::uint32_t words[kBatchElements];
    philox_batch(seed, counter + static_cast<std::uint64_t>(batch * kBatch), words);
    const std::int64_t i0 = batch * kBatchElements;
    if (i0 + kBatchElements <= n) {
      for (std::int64_t e = 0; e < kBatchElements; ++e) {
        const bool kept = (words[e] >> 8) >= threshold;
        keep[i0 + e] = kept ? 1 : 0;
        y[i0 + e] = x[i0 + e] * (kept ? keep_scale : 0.0f);
      }
    } else {
      for (std::int64_t e = 0; i0 + e < n; ++e) {
        const bool kept = (words[e] >> 8) >= threshold;
        keep[i0 + e] = kept ? 1 : 0;
        y[i0 + e] = x[i0 + e] * (kept ? keep_scale : 0.0f);
      }
    }
  });
}

void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  if (p >= 1.0f) return;  // nothing was kept
  const float keep_scale = p <= 0.0f ? 1.0f : 1.0f / (1.0f - p);
  parallel_chunks(n, 4096, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) dx[i] += dy[i] * (keep[i] != 0 ? keep_scale : 0.0f);
  });
}

void dropout_backward_write(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  const float keep_scale = 1.0f / (1.0f - p);  // inf for p = 1, where nothing is kept
  parallel_chunks(n, 4096, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) dx[i] = keep[i] != 0 ? dy[i] * keep_scale : 0.0f;
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
