// Dropout. Element i keeps when the uniform from word i % 4 of Philox block
// counter + i / 4 is ≥ p: a pure function of (seed, counter, i), so the mask
// is the same for any thread count and any ISA.
#include "isa.h"

#include <algorithm>
#include <cstdint>

namespace attn::kernels::ATTN_ISA_NAMESPACE {
#include "dropout.inc"

namespace {
constexpr std::int64_t kParallelMin = 1 << 14;  // elements; below this, threads cost more than they give
constexpr std::int64_t kBlocksPerChunk = 256;   // Philox blocks per unit of work (1024 elements)

// Philox-4x32-10, the same function as attn::philox4x32, inlined here so
// that the loop over blocks vectorises (the tests check the two agree).
struct Words {
  std::uint32_t w[4];
};
inline Words philox(std::uint64_t key, std::uint64_t counter) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32);
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
  return {{c0, c1, c2, c3}};
}

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
  const float keep_scale = 1.0f / (1.0f - p);
  const std::int64_t blocks = (n + 3) / 4;
  const std::int64_t chunks = (blocks + kBlocksPerChunk - 1) / kBlocksPerChunk;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t b_end = std::min(blocks, (chunk + 1) * kBlocksPerChunk);
    for (std::int64_t b = chunk * kBlocksPerChunk; b < b_end; ++b) {
      const Words words = philox(seed, counter + static_cast<std::uint64_t>(b));
      const std::int64_t i0 = 4 * b, count = std::min<std::int64_t>(4, n - i0);
      for (std::int64_t k = 0; k < count; ++k) {
        const bool kept = (words.w[k] >> 8) >= threshold;
        keep[i0 + k] = kept ? 1 : 0;
        y[i0 + k] = kept ? x[i0 + k] * keep_scale : 0.0f;
      }
    }
  }
}

void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  if (p >= 1.0f) return;  // nothing was kept
  const float keep_scale = p <= 0.0f ? 1.0f : 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) dx[i] += keep[i] != 0 ? dy[i] * keep_scale : 0.0f;
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
