// The constants and the order of operations are NumPy's (bit_generator.pyx's
// SeedSequence, pcg64.h, distributions.c's bounded integers); any change
// here changes every resample and so every p-value.
#include "attn/eval/numpy_random.h"

#include <array>

#include "attn/core/error.h"

namespace attn::eval {
namespace {

// SeedSequence(seed).generate_state(4, np.uint64) with the default pool of
// four 32-bit words.
std::array<std::uint64_t, 4> seed_sequence_state(std::uint64_t seed) {
  constexpr std::uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875;
  constexpr std::uint32_t kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  constexpr std::uint32_t kMixL = 0xca01f9dd, kMixR = 0x4973f715;
  constexpr int kShift = 16;

  // The integer as little-endian 32-bit words, no trailing zero word (0 -> [0]).
  std::vector<std::uint32_t> entropy{static_cast<std::uint32_t>(seed)};
  if (seed >> 32) entropy.push_back(static_cast<std::uint32_t>(seed >> 32));

  std::uint32_t hash_a = kInitA;
  const auto hashmix = [&hash_a](std::uint32_t value) {
    value ^= hash_a;
    hash_a *= kMultA;
    value *= hash_a;
    value ^= value >> kShift;
    return value;
  };
  const auto mix = [](std::uint32_t x, std::uint32_t y) {
    std::uint32_t result = kMixL * x - kMixR * y;
    result ^= result >> kShift;
    return result;
  };
  std::array<std::uint32_t, 4> pool{};
  for (std::size_t i = 0; i < pool.size(); ++i) pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0u);
  for (std::size_t src = 0; src < pool.size(); ++src)
    for (std::size_t dst = 0; dst < pool.size(); ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));

  std::uint32_t hash_b = kInitB;
  std::array<std::uint32_t, 8> words{};
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::uint32_t value = pool[i % pool.size()];
    value ^= hash_b;
    hash_b *= kMultB;
    value *= hash_b;
    value ^= value >> kShift;
    words[i] = value;
  }
  std::array<std::uint64_t, 4> state{};
  for (std::size_t i = 0; i < state.size(); ++i)
    state[i] = static_cast<std::uint64_t>(words[2 * i]) | (static_cast<std::uint64_t>(words[2 * i + 1]) << 32);
  return state;
}

unsigned __int128 join128(std::uint64_t high, std::uint64_t low) {
  return (static_cast<unsigned __int128>(high) << 64) | low;
}

}  // namespace

NumpyPcg64::NumpyPcg64(std::uint64_t seed) {
  const std::array<std::uint64_t, 4> words = seed_sequence_state(seed);
  // pcg_setseq_128_srandom_r(initstate = words[0:2], initseq = words[2:4])
  increment_ = (join128(words[2], words[3]) << 1) | 1u;
  state_ = 0;
  step();
  state_ += join128(words[0], words[1]);
  step();
}

void NumpyPcg64::step() {
  static const unsigned __int128 kMultiplier = join128(2549297995355413924ULL, 4865540595714422341ULL);
  state_ = state_ * kMultiplier + increment_;
}

std::uint64_t NumpyPcg64::next_uint64() {
  step();
  const auto high = static_cast<std::uint64_t>(state_ >> 64);
  const auto low = static_cast<std::uint64_t>(state_);
  const auto xored = high ^ low;
  const unsigned rotation = static_cast<unsigned>(state_ >> 122);
  return (xored >> rotation) | (xored << ((64u - rotation) & 63u));
}

std::uint32_t NumpyPcg64::next_uint32() {
  if (has_half_) {
    has_half_ = false;
    return half_;
  }
  const std::uint64_t next = next_uint64();
  has_half_ = true;
  half_ = static_cast<std::uint32_t>(next >> 32);
  return static_cast<std::uint32_t>(next);
}

double NumpyPcg64::next_double() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

std::uint64_t NumpyPcg64::next_below(std::uint64_t bound) {
  require(bound >= 1 && bound - 1 <= 0xFFFFFFFFULL, "resampling supports up to 2^32 segments");
  const std::uint64_t range = bound - 1;  // NumPy's inclusive `rng`
  if (range == 0) return 0;
  if (range == 0xFFFFFFFFULL) return next_uint32();
  const auto exclusive = static_cast<std::uint32_t>(bound);
  std::uint64_t product = static_cast<std::uint64_t>(next_uint32()) * exclusive;
  auto leftover = static_cast<std::uint32_t>(product);
  if (leftover < exclusive) {
    const std::uint32_t threshold = (0xFFFFFFFFu - static_cast<std::uint32_t>(range)) % exclusive;
    while (leftover < threshold) {
      product = static_cast<std::uint64_t>(next_uint32()) * exclusive;
      leftover = static_cast<std::uint32_t>(product);
    }
  }
  return product >> 32;
}

std::vector<std::uint32_t> bootstrap_indices(std::size_t population, std::size_t samples, std::uint64_t seed) {
  NumpyPcg64 rng(seed);
  std::vector<std::uint32_t> indices(population * samples);
  for (std::uint32_t& index : indices) index = static_cast<std::uint32_t>(rng.next_below(population));
  return indices;
}

std::vector<std::uint8_t> coin_flips(std::size_t population, std::size_t samples, std::uint64_t seed) {
  NumpyPcg64 rng(seed);
  std::vector<std::uint8_t> flips(population * samples);
  std::uint32_t buffer = 0;
  int left = 0;  // bits of `buffer` not used yet, after the current one
  for (std::uint8_t& flip : flips) {
    if (left == 0) {
      buffer = rng.next_uint32();
      left = 31;
    } else {
      buffer >>= 1;
      --left;
    }
    flip = static_cast<std::uint8_t>(buffer & 1u);
  }
  return flips;
}

}  // namespace attn::eval
