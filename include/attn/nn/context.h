// What every layer's forward and backward get besides their own data.
#pragma once
#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/nn/param_store.h"

namespace attn::nn {

struct StepContext {
  ParamStore& params;
  Arena& arena;  // activations of this step; reset by the caller between steps
  Rng& rng;      // dropout masks
  bool training = false;
};

}  // namespace attn::nn
