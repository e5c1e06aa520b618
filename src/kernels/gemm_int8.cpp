// Weight quantization for the int8 products (their kernels: isa/lowp/gemm_int8.cpp).
#include "attn/kernels/gemm_int8.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/core/error.h"

namespace attn::kernels {

float quantize_row(const float* row, std::int64_t k, std::int8_t* out) {
  float amax = 0.0f;
  for (std::int64_t p = 0; p < k; ++p) {
    if (!std::isfinite(row[p])) throw Error("a non-finite weight at column " + std::to_string(p));
    amax = std::max(amax, std::fabs(row[p]));
  }
  const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (std::int64_t p = 0; p < k; ++p)
    out[p] = static_cast<std::int8_t>(std::clamp(std::nearbyint(row[p] * inverse), -127.0f, 127.0f));
  return amax / 127.0f;
}

QuantizedWeight quantize_weight(const float* w, std::int64_t ldw, std::int64_t n, std::int64_t k) {
  if (n < 0 || k < 0 || ldw < std::max<std::int64_t>(k, 1))
    throw Error("quantize_weight: bad shape " + std::to_string(n) + "×" + std::to_string(k) + ", ld " +
                std::to_string(ldw));
  QuantizedWeight q;
  q.n = n;
  q.k = k;
  q.quads = (k + 3) / 4;
  const std::int64_t panels = (n + kInt8PanelCols - 1) / kInt8PanelCols;
  q.packed.assign(static_cast<std::size_t>(panels * q.quads * kInt8PanelCols * 4), 0);
  q.scales.resize(static_cast<std::size_t>(n));
  q.sums.resize(static_cast<std::size_t>(n));
  std::vector<std::int8_t> row(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < n; ++j) {
    try {
      q.scales[static_cast<std::size_t>(j)] = quantize_row(w + j * ldw, k, row.data());
    } catch (const Error& e) {
      throw Error("quantize_weight: row " + std::to_string(j) + ": " + e.what());
    }
    std::int32_t sum = 0;
    const std::int64_t panel = j / kInt8PanelCols, column = j % kInt8PanelCols;
    for (std::int64_t p = 0; p < k; ++p) {
      sum += row[static_cast<std::size_t>(p)];
      q.packed[static_cast<std::size_t>(((panel * q.quads + p / 4) * kInt8PanelCols + column) * 4 + p % 4)] =
          row[static_cast<std::size_t>(p)];
    }
    q.sums[static_cast<std::size_t>(j)] = sum;
  }
  return q;
}

}  // namespace attn::kernels
