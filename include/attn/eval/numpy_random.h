// NumPy's default generator, bit for bit: np.random.default_rng(seed) is
// PCG64 (128-bit LCG, XSL-RR output) seeded through SeedSequence, and the
// two draws sacreBLEU's significance tests make from it, so that attn's
// resamples are the very ones sacreBLEU uses:
//   rng.choice(n, size=(k, n), replace=True)        -> bootstrap_indices
//   rng.integers(2, size=(k, n), dtype=bool)        -> coin_flips
// Checked against the values NumPy's documentation prints for seed 12345.
#pragma once
#include <cstdint>
#include <vector>

namespace attn::eval {

class NumpyPcg64 {
 public:
  // np.random.default_rng(seed) for a non-negative integer seed.
  explicit NumpyPcg64(std::uint64_t seed);

  std::uint64_t next_uint64();
  // Halves of one 64-bit draw, low half first (NumPy's buffered next_uint32).
  std::uint32_t next_uint32();
  // Generator.random(): 53 random bits in [0, 1).
  double next_double();
  // One value of Generator.integers(0, bound) (int64), bound >= 1: Lemire's
  // multiply-and-reject on 32-bit draws when bound - 1 fits 32 bits.
  std::uint64_t next_below(std::uint64_t bound);

 private:
  unsigned __int128 state_ = 0;
  unsigned __int128 increment_ = 0;
  bool has_half_ = false;
  std::uint32_t half_ = 0;

  void step();
};

// rng.choice(population, size=(samples, population), replace=True) for a
// fresh default_rng(seed): [samples * population], row-major.
std::vector<std::uint32_t> bootstrap_indices(std::size_t population, std::size_t samples, std::uint64_t seed);

// rng.integers(2, size=(samples, population), dtype=bool) for a fresh
// default_rng(seed): [samples * population], row-major, 32 flips per 32-bit draw.
std::vector<std::uint8_t> coin_flips(std::size_t population, std::size_t samples, std::uint64_t seed);

}  // namespace attn::eval
