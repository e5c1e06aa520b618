// Dropout with a saved mask; the mask comes from the counter-based Rng, so it
// is the same whatever the thread count. Each kernel is built per ISA and
// picked at run time (src/kernels/kernel_table.h); threads as parallel_for
// (src/kernels/isa/parallel_for.h): OpenMP above ~16k elements, serial inside
// a parallel region.
#pragma once
#include <cstdint>

namespace attn::kernels {

// x, y: [n]; keep: [n]. y = x ⊙ keep / (1 − p), keep[i] ∈ {0, 1}: keep[i] = 1
// when uniform_from_bits(word) ≥ p for word i % 4 of philox4x32(seed,
// counter + i / 4), i.e. with probability 1 − p. The mask is a pure function
// of (seed, counter, i): the same for every thread count and ISA. Callers
// reserve ceil(n / 4) blocks with Rng::reserve_blocks. p ≤ 0: y = x, keep
// all 1; p ≥ 1: y = 0, keep all 0. A dropped ±inf or NaN gives NaN (as
// x ⊙ mask would). y may alias x.
void dropout_forward(const float* x, float* y, std::uint8_t* keep, std::int64_t n, float p, std::uint64_t seed,
                     std::uint64_t counter);

// dy, dx: [n]; keep: [n] from the forward. dx += dy ⊙ keep / (1 − p).
void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p);

// dy, dx: [n]; keep: [n] from the forward. dx = keep ? dy / (1 − p) : 0,
// written (not accumulated); a dropped element gives exactly 0, even where dy
// is ±inf or NaN. dx may alias dy.
void dropout_backward_write(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p);

}  // namespace attn::kernels
