// Strided row kernels, compiled once per ISA with its widest registers.
#include "isa.h"

#include "attn/kernels/rows.h"

#include <algorithm>
#include <utility>

#include "kernels.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {
// Dots and row sums of at most a few dozen rows of a few dozen floats (a
// window of ConvSAN or a kernel of MUSE's convolutions, per query): the work
// per call is small, so what costs is not the multiply-adds but the overhead
// around them — reducing each dot's lanes one by one, and taking y through
// memory once per row. Here each sum stays in registers until its end, two
// accumulators per row or lane chunk keep the FMA units busy, and four dots
// are reduced together by a tree of lane shuffles.

using Lanes = std::int32_t __attribute__((vector_size(vec_math::kWidth * sizeof(float))));

// Lane `lane` of fold<C>: the inputs hold chunks of 2C lanes (per source);
// the output's chunk q of C lanes is chunk q of (a, b) with its two halves added.
template <int C>
constexpr int fold_lane(int lane, int half) {
  const int q = lane / C, r = lane % C, per_input = vec_math::kWidth / (2 * C);
  const int base = q < per_input ? q * 2 * C : vec_math::kWidth + (q - per_input) * 2 * C;
  return base + half * C + r;
}
template <int C, int... L>
vec_math::Vec fold(vec_math::Vec a, vec_math::Vec b, std::integer_sequence<int, L...>) {
  return __builtin_shuffle(a, b, Lanes{fold_lane<C>(L, 0)...}) + __builtin_shuffle(a, b, Lanes{fold_lane<C>(L, 1)...});
}
template <int C>
vec_math::Vec fold(vec_math::Vec a, vec_math::Vec b) {
  return fold<C>(a, b, std::make_integer_sequence<int, vec_math::kWidth>{});
}

// The lane sums of s0..s3 in lanes 0..3, in a fixed tree.
vec_math::Vec reduce_four(vec_math::Vec s0, vec_math::Vec s1, vec_math::Vec s2, vec_math::Vec s3) {
  constexpr int W = vec_math::kWidth;
  vec_math::Vec w = fold<W / 4>(fold<W / 2>(s0, s1), fold<W / 2>(s2, s3));  // 4 sources × W/4 lanes
  if constexpr (W >= 8) w = fold < W / 8 ? W / 8 : 1 > (w, w);
  if constexpr (W >= 16) w = fold < W / 16 ? W / 16 : 1 > (w, w);
  static_assert(W <= 16, "one more fold per doubling of the width");
  return w;
}

// out[0..rows) = scale · (a · r_k) for the `rows` (≤ 4) rows r_k = first + k·stride.
void dots_of_four(const float* a, const float* first, std::int64_t stride, std::int64_t rows, std::int64_t n,
                  float scale, float* out) {
  using namespace vec_math;
  Vec even[4] = {}, odd[4] = {};  // per row: sums over the even and the odd lane chunks
  std::int64_t x = 0;
  for (; x + 2 * kWidth <= n; x += 2 * kWidth) {
    const Vec a0 = load(a + x), a1 = load(a + x + kWidth);
    for (std::int64_t k = 0; k < rows; ++k) {
      const float* r = first + k * stride + x;
      even[k] = mul_add(a0, load(r), even[k]);
      odd[k] = mul_add(a1, load(r + kWidth), odd[k]);
    }
  }
  for (; x < n; x += kWidth) {
    const std::int64_t m = std::min<std::int64_t>(kWidth, n - x);
    const Vec a0 = m == kWidth ? load(a + x) : load_partial(a + x, m, 0.0f);
    for (std::int64_t k = 0; k < rows; ++k) {
      const float* r = first + k * stride + x;
      even[k] = mul_add(a0, m == kWidth ? load(r) : load_partial(r, m, 0.0f), even[k]);
    }
  }
  const Vec sums = reduce_four(even[0] + odd[0], even[1] + odd[1], even[2] + odd[2], even[3] + odd[3]);
  for (std::int64_t k = 0; k < rows; ++k) out[k] = scale * sums[k];
}

void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out) {
  for (std::int64_t c = 0; c < count; c += 4)
    dots_of_four(a, rows + c * stride, stride, std::min<std::int64_t>(4, count - c), n, scale, out + c);
}

// y[x .. x+m) += Σ_c coef[c] · rows[c][x .. x+m), m ≤ `Chunks` vectors: y in
// registers for the whole sum, the even and odd rows in separate sums.
template <int Chunks>
void accumulate_chunk(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t m,
                      float* y) {
  using namespace vec_math;
  Vec even[Chunks] = {}, odd[Chunks] = {};
  auto row = [&](const float* r, int k) {
    const std::int64_t left = m - k * kWidth;
    return left >= kWidth ? load(r + k * kWidth) : load_partial(r + k * kWidth, left, 0.0f);
  };
  std::int64_t c = 0;
  for (; c + 2 <= count; c += 2) {
    const Vec c0 = splat(coef[c]), c1 = splat(coef[c + 1]);
    const float* r0 = rows + c * stride;
    for (int k = 0; k < Chunks; ++k) {
      even[k] = mul_add(c0, row(r0, k), even[k]);
      odd[k] = mul_add(c1, row(r0 + stride, k), odd[k]);
    }
  }
  if (c < count)
    for (int k = 0; k < Chunks; ++k) even[k] = mul_add(splat(coef[c]), row(rows + c * stride, k), even[k]);
  for (int k = 0; k < Chunks; ++k) {
    const std::int64_t left = m - k * kWidth;
    if (left >= kWidth)
      store(y + k * kWidth, load(y + k * kWidth) + (even[k] + odd[k]));
    else
      store_partial(y + k * kWidth, load_partial(y + k * kWidth, left, 0.0f) + (even[k] + odd[k]), left);
  }
}

void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y) {
  if (count <= 0) return;
  constexpr std::int64_t kChunk = 4 * vec_math::kWidth;  // 64 floats with AVX-512: one head of 64 at once
  std::int64_t x = 0;
  for (; x + kChunk <= n; x += kChunk) accumulate_chunk<4>(coef, rows + x, stride, count, kChunk, y + x);
  for (; x < n; x += vec_math::kWidth)
    accumulate_chunk<1>(coef, rows + x, stride, count, std::min<std::int64_t>(vec_math::kWidth, n - x), y + x);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
