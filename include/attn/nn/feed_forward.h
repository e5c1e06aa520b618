// Position-wise feed-forward: y = fc2(ReLU(fc1(x))).
#pragma once
#include <cstdint>
#include <string>

#include "attn/nn/context.h"
#include "attn/nn/dropout.h"
#include "attn/nn/linear.h"

namespace attn::nn {

struct FeedForward {
  Linear fc1, fc2;  // [ffn, d], [d, ffn]
  Dropout activation_dropout;

  void declare(ParamStore& params, const std::string& name, std::int64_t d, std::int64_t ffn_dim);

  struct Saved {
    const float* x = nullptr;  // [rows, d]
    float* hidden = nullptr;   // [rows, ffn] after ReLU (and dropout); ReLU′ is read from it
    Dropout::Saved drop;
    std::int64_t rows = 0;
  };
  // x: [rows, d] → y: [rows, d] (written).
  Saved forward(StepContext& ctx, const float* x, float* y, std::int64_t rows) const;
  // Accumulates dx: [rows, d].
  void backward(StepContext& ctx, const Saved& saved, const float* dy, float* dx) const;
};

}  // namespace attn::nn
