// The constants and steps are MT19937's reference code (mt19937ar.c), which
// CPython's _randommodule.c keeps: init_genrand, init_by_array, genrand_uint32.
#include "attn/eval/python_random.h"

#include <bit>
#include <vector>

#include "attn/core/error.h"

namespace attn::eval {

namespace {

constexpr std::size_t kN = 624, kM = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU, kUpperMask = 0x80000000U, kLowerMask = 0x7fffffffU;

void init_genrand(std::array<std::uint32_t, kN>& mt, std::uint32_t s) {
  mt[0] = s;
  for (std::size_t i = 1; i < kN; ++i)
    mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
}

void init_by_array(std::array<std::uint32_t, kN>& mt, const std::vector<std::uint32_t>& key) {
  init_genrand(mt, 19650218U);
  std::size_t i = 1, j = 0;
  for (std::size_t k = std::max(kN, key.size()); k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (std::size_t k = kN - 1; k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000U;  // a nonzero initial state for certain
}

}  // namespace

PythonRandom::PythonRandom(std::uint64_t seed) {
  // CPython: the absolute value as little-endian 32-bit words, no leading zero word (0 -> [0]).
  std::vector<std::uint32_t> key{static_cast<std::uint32_t>(seed)};
  if (seed >> 32) key.push_back(static_cast<std::uint32_t>(seed >> 32));
  init_by_array(state_, key);
}

std::uint32_t PythonRandom::next_uint32() {
  if (index_ >= kN) {
    for (std::size_t k = 0; k < kN; ++k) {
      const std::uint32_t y = (state_[k] & kUpperMask) | (state_[(k + 1) % kN] & kLowerMask);
      state_[k] = state_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    }
    index_ = 0;
  }
  std::uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= y >> 18;
  return y;
}

std::uint32_t PythonRandom::getrandbits(int bits) {
  require(bits >= 1 && bits <= 32, "getrandbits: 1 to 32 bits");
  return next_uint32() >> (32 - bits);
}

std::uint32_t PythonRandom::randrange(std::uint32_t n) {
  require(n >= 1, "randrange: the range must not be empty");
  const int bits = std::bit_width(n);
  std::uint32_t r = getrandbits(bits);
  while (r >= n) r = getrandbits(bits);
  return r;
}

}  // namespace attn::eval
