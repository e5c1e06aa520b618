// CPython's random.Random(seed), bit for bit, for the one draw the slope
// bootstrap makes: randrange(n). The Mersenne Twister (MT19937) seeded as
// CPython seeds it from an integer (init_by_array over the integer's 32-bit
// words), and randrange's rejection sampling on getrandbits(n.bit_length()).
// The slope verdicts were first computed in Python with these draws; keeping
// them keeps every resample, and so every p-value, the same.
#pragma once
#include <array>
#include <cstdint>

namespace attn::eval {

class PythonRandom {
 public:
  // random.Random(seed) for a non-negative integer seed below 2^64.
  explicit PythonRandom(std::uint64_t seed);

  // MT19937's next 32-bit output (genrand_uint32).
  std::uint32_t next_uint32();
  // random.getrandbits(bits), 1 <= bits <= 32.
  std::uint32_t getrandbits(int bits);
  // random.randrange(n), n >= 1: getrandbits(n.bit_length()) until below n.
  std::uint32_t randrange(std::uint32_t n);

 private:
  std::array<std::uint32_t, 624> state_{};
  std::size_t index_ = 624;
};

}  // namespace attn::eval
