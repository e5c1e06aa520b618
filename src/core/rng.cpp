#include "attn/core/rng.h"

#include <cmath>
#include <numbers>

namespace attn {

std::array<std::uint32_t, 4> philox4x32(std::uint64_t key, std::uint64_t counter) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32);
  std::uint32_t c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

std::uint32_t Rng::next_u32() {
  if (buffered_ == 0) {
    buffer_ = philox4x32(state_.seed, state_.counter++);
    buffered_ = 4;
  }
  return buffer_[4 - buffered_--];
}

float Rng::uniform() { return uniform_from_bits(next_u32()); }

float Rng::normal() {
  // 1 - u keeps the log argument in (0, 1].
  const float u1 = 1.0f - uniform(), u2 = uniform();
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(2.0f * std::numbers::pi_v<float> * u2);
}

std::uint64_t Rng::below(std::uint64_t n) {
  const std::uint64_t wide = (static_cast<std::uint64_t>(next_u32()) << 32) | next_u32();
  return n == 0 ? 0 : wide % n;
}

std::uint64_t Rng::reserve_blocks(std::uint64_t blocks) {
  buffered_ = 0;  // later scalar draws start on a fresh block
  const std::uint64_t first = state_.counter;
  state_.counter += blocks;
  return first;
}

RngState Rng::state() const {
  if (buffered_ == 0) return state_;
  return {state_.seed, state_.counter - 1, static_cast<std::uint32_t>(4 - buffered_)};
}

void Rng::set_state(const RngState& state) {
  state_ = {state.seed, state.counter, 0};
  buffered_ = 0;
  if (state.word > 0 && state.word < 4) {
    buffer_ = philox4x32(state_.seed, state_.counter++);
    buffered_ = 4 - static_cast<int>(state.word);
  }
}

}  // namespace attn
