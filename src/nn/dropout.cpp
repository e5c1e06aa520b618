#include "attn/nn/dropout.h"

#include <cstring>

#include "attn/kernels/dropout.h"

namespace attn::nn {

Dropout::Saved Dropout::forward(StepContext& ctx, float* x, std::int64_t n) const {
  if (!ctx.training || p <= 0.0f) return {nullptr, n};
  // A byte per element, carved from the float arena.
  auto* keep = reinterpret_cast<std::uint8_t*>(ctx.arena.alloc((n + 3) / 4));
  const std::uint64_t counter = ctx.rng.reserve_blocks((n + 3) / 4);
  kernels::dropout_forward(x, x, keep, n, p, ctx.rng.seed(), counter);
  return {keep, n};
}

void Dropout::backward(const Saved& saved, const float* dy, float* dx) const {
  if (saved.keep) {
    kernels::dropout_backward_write(dy, saved.keep, dx, saved.n, p);
  } else if (dx != dy) {
    std::memcpy(dx, dy, sizeof(float) * saved.n);
  }
}

}  // namespace attn::nn
