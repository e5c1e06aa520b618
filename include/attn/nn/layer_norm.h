// LayerNorm over the model dimension, with its saved statistics.
#pragma once
#include <cstdint>
#include <string>

#include "attn/nn/context.h"

namespace attn::nn {

struct LayerNorm {
  ParamId gamma = -1, beta = -1;  // [d]
  std::int64_t d = 0;
  float eps = 1e-5f;

  // Declares "<name>.weight" (ones) and "<name>.bias" (zeros), as PyTorch names them.
  void declare(ParamStore& params, const std::string& name, std::int64_t dim);

  struct Saved {
    const float* x = nullptr;  // [rows, d]
    float* mean = nullptr;     // [rows]
    float* rstd = nullptr;     // [rows]
    std::int64_t rows = 0;
  };
  // x: [rows, d] → y: [rows, d]; mean/rstd carved from the arena.
  Saved forward(StepContext& ctx, const float* x, float* y, std::int64_t rows) const;
  // Accumulates dx: [rows, d], dgamma, dbeta.
  void backward(StepContext& ctx, const Saved& saved, const float* dy, float* dx) const;
};

}  // namespace attn::nn
