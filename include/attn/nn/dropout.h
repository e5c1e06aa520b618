// Dropout as a layer: draws its mask from the step's Rng in training, and is
// the identity (no mask, no copy) in evaluation or with p == 0.
#pragma once
#include <cstdint>

#include "attn/nn/context.h"

namespace attn::nn {

struct Dropout {
  float p = 0.0f;

  struct Saved {
    std::uint8_t* keep = nullptr;  // [n], or null when the dropout was the identity
    std::int64_t n = 0;
  };
  // In place on x: [n].
  Saved forward(StepContext& ctx, float* x, std::int64_t n) const;
  // dx = dy ⊙ keep / (1 − p), or dy where the forward was the identity;
  // dy, dx: [n], written (not accumulated), dx may alias dy.
  void backward(const Saved& saved, const float* dy, float* dx) const;
};

}  // namespace attn::nn
