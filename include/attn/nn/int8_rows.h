// An embedding table an int8 model file holds in int8, gathered row by row
// from the int8 form of the output projection tied to it, so that a model
// loaded as int8 keeps no FP32 copy of the table. Each row is dequantized with
// the file's scale (q·s, as loading it into FP32 gives), not the form's (which
// may differ from it in the last bit), so the gathered values are the bits
// the FP32 table gave. A row the form re-quantized (kernels::quantize_row on
// its dequantized values: its largest |q| was not 127) keeps its FP32 values.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "attn/kernels/gemm_int8.h"

namespace attn::nn {

struct Int8Rows {
  std::vector<float> scales;                             // [rows] the file's
  std::map<std::int64_t, std::vector<float>> fp32_rows;  // row → its dequantized values [k], where the form's differ

  // ids: [tokens] (each in [0, rows)), out: [tokens, form.k]:
  // out[t, :] = scale · (q[ids[t], :] · scales[ids[t]]), as kernels::embedding_gather on the dequantized table.
  void gather(const kernels::QuantizedWeight& form, const std::int32_t* ids, float* out, std::int64_t tokens,
              float scale) const;
  std::int64_t bytes() const;
};

}  // namespace attn::nn
