// What the benchmark programs share: medians of repeated timings and
// reproducible random inputs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "attn/core/rng.h"

namespace attn::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// n floats uniform in [−1, 1), reproducible from seed.
inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = 2.0f * rng.uniform() - 1.0f;
  return v;
}

}  // namespace attn::bench
