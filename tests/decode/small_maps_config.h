// The small model the attention-map tests draw (attend's JSON and page, the
// serve page): 2 + 2 layers of 4 heads of width 4, MUSE kernels {3, 7}, a
// ConvSAN window of 5 on the first layer only, no dropout.
#pragma once
#include <cstdint>
#include <string>

#include "attn/model/config.h"

namespace attn::test {

inline model::ModelConfig small_maps_config(const std::string& arch, std::int64_t vocab_size) {
  model::ModelConfig c;
  c.arch = arch;
  c.vocab_size = vocab_size;
  c.dim = 16;
  c.heads = 4;
  c.ffn_dim = 24;
  c.enc_layers = 2;
  c.dec_layers = 2;
  c.dropout = 0.0f;
  c.max_positions = 128;
  c.options["muse_kernels"] = {3, 7};
  c.options["csan_window"] = 5;
  c.options["csan_layers"] = 1;
  return c;
}

}  // namespace attn::test
