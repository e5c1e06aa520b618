#include "attn/nn/int8_rows.h"

#include <stdexcept>

namespace attn::nn {

void Int8Rows::gather(const kernels::QuantizedWeight& form, const std::int32_t* ids, float* out, std::int64_t tokens,
                      float scale) const {
  if (static_cast<std::int64_t>(scales.size()) != form.n)
    throw std::logic_error("Int8Rows::gather: the scales are not the form's rows");
  std::vector<std::int8_t> q(static_cast<std::size_t>(form.k));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t r = ids[t];
    float* out_row = out + t * form.k;  // [k]
    if (const auto it = fp32_rows.find(r); it != fp32_rows.end()) {
      for (std::int64_t c = 0; c < form.k; ++c) out_row[c] = scale * it->second[static_cast<std::size_t>(c)];
      continue;
    }
    kernels::unpack_row(form, r, q.data());
    const float s = scales[static_cast<std::size_t>(r)];
    // Two roundings, as the FP32 table's value q·s and then the gather's scale·value.
    for (std::int64_t c = 0; c < form.k; ++c) {
      const float value = static_cast<float>(q[static_cast<std::size_t>(c)]) * s;
      out_row[c] = scale * value;
    }
  }
}

std::int64_t Int8Rows::bytes() const {
  std::size_t total = scales.size() * sizeof(float);
  for (const auto& [row, values] : fp32_rows) total += values.size() * sizeof(float);
  return static_cast<std::int64_t>(total);
}

}  // namespace attn::nn
