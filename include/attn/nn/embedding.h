// Token embedding scaled by sqrt(d), plus sinusoidal positions.
#pragma once
#include <cstdint>
#include <string>

#include "attn/core/tensor.h"
#include "attn/nn/context.h"
#include "attn/nn/positions.h"

namespace attn::nn {

// Sinusoidal position table [max_len, d]: column j < d/2 is sin(t·ω_j), column
// d/2 + j is cos(t·ω_j), ω_j = 10000^(−j / (d/2 − 1)) (fairseq's layout), t from 0.
Tensor sinusoidal_positions(std::int64_t max_len, std::int64_t d);

struct Embedding {
  ParamId table = -1;  // [vocab, d], N(0, d^-1/2)
  std::int64_t vocab = 0, d = 0;

  void declare(ParamStore& params, const std::string& name, std::int64_t vocab_size, std::int64_t dim);

  // ids: [batch, t] → out: [batch·t, d] = sqrt(d)·table[ids] + positions[t + position_offset].
  void forward(const ParamStore& params, const Positions& positions, const std::int32_t* ids, float* out,
               std::int64_t batch, std::int64_t t, std::int64_t position_offset = 0) const;
  // Accumulates sqrt(d)·dout into the rows of the table gradient.
  void backward(ParamStore& params, const std::int32_t* ids, const float* dout, std::int64_t tokens) const;
};

}  // namespace attn::nn
