// Rng: counter-based (Philox-4x32-10), so any draw is a pure function of
// (seed, counter). Kernels draw in parallel without sharing state, results do
// not depend on the thread count, and the whole state is two integers that a
// checkpoint saves and restores.
#pragma once
#include <array>
#include <cstdint>

namespace attn {

// One Philox-4x32-10 block: four independent 32-bit words for (key, counter).
std::array<std::uint32_t, 4> philox4x32(std::uint64_t key, std::uint64_t counter);

// Uniform in [0, 1) from 32 random bits (24-bit mantissa; never 1.0f).
inline float uniform_from_bits(std::uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1.0p-24f; }

struct RngState {
  std::uint64_t seed = 0;
  std::uint64_t counter = 0;  // the Philox block the next word comes from
  std::uint32_t word = 0;     // words of that block already used (0..3)
  bool operator==(const RngState&) const = default;
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) : state_{seed, 0} {}

  std::uint32_t next_u32();
  float uniform();                       // [0, 1)
  float normal();                        // N(0, 1), Box–Muller
  std::uint64_t below(std::uint64_t n);  // uniform integer in [0, n)

  // Reserves `blocks` Philox blocks for a kernel that draws them itself as
  // philox4x32(seed(), first + i); returns `first`.
  std::uint64_t reserve_blocks(std::uint64_t blocks);

  std::uint64_t seed() const { return state_.seed; }
  RngState state() const;
  void set_state(const RngState& state);

 private:
  RngState state_;
  std::array<std::uint32_t, 4> buffer_{};
  int buffered_ = 0;  // words of buffer_ not yet used
};

}  // namespace attn
