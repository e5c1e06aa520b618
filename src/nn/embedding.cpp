#include "attn/nn/embedding.h"

#include <cmath>

#include "attn/kernels/elementwise.h"
#include "attn/kernels/embedding.h"

namespace attn::nn {

Tensor sinusoidal_positions(std::int64_t max_len, std::int64_t d) {
  Tensor table = Tensor::zeros({max_len, d});
  for (std::int64_t t = 0; t < max_len; ++t) sinusoidal_row(t, d, table.data() + t * d);
  return table;
}

void Embedding::declare(ParamStore& params, const std::string& name, std::int64_t vocab_size, std::int64_t dim) {
  vocab = vocab_size;
  d = dim;
  table = params.add(name + ".weight", {vocab, d}, Init::normal, static_cast<float>(1.0 / std::sqrt(double(d))));
  // Gathered in FP32, also where a tied output projection multiplies it in int8
  // or bf16; from that projection's int8 form where an int8 file is loaded as int8.
  params.read_in_fp32(table);
}

void Embedding::forward(const ParamStore& params, const Positions& positions, const std::int32_t* ids, float* out,
                        std::int64_t batch, std::int64_t t, std::int64_t position_offset) const {
  const float scale = std::sqrt(static_cast<float>(d));
  params.gather_rows(table, ids, out, batch * t, scale);
  const float* rows = positions.rows(position_offset + t) + position_offset * d;  // [t, d]
  for (std::int64_t b = 0; b < batch; ++b) kernels::add(out + b * t * d, rows, out + b * t * d, t * d);
}

void Embedding::backward(ParamStore& params, const std::int32_t* ids, const float* dout, std::int64_t tokens) const {
  kernels::embedding_scatter_add(dout, ids, params.grad(table), tokens, d, std::sqrt(static_cast<float>(d)));
}

}  // namespace attn::nn
