// Weight quantization for the int8 products, and their run-time dispatch.
#include "attn/kernels/gemm_int8.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/core/error.h"
#include "dispatch.h"

namespace attn::kernels {

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
  for (std::int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    float amax = 0.0f;
    for (std::int64_t p = 0; p < k; ++p) {
      if (!std::isfinite(row[p])) throw Error("quantize_weight: a non-finite weight in row " + std::to_string(j));
      amax = std::max(amax, std::fabs(row[p]));
    }
    const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
    q.scales[static_cast<std::size_t>(j)] = amax / 127.0f;
    std::int32_t sum = 0;
    const std::int64_t panel = j / kInt8PanelCols, column = j % kInt8PanelCols;
    for (std::int64_t p = 0; p < k; ++p) {
      const auto value = static_cast<std::int32_t>(std::clamp(std::nearbyint(row[p] * inverse), -127.0f, 127.0f));
      sum += value;
      q.packed[static_cast<std::size_t>(((panel * q.quads + p / 4) * kInt8PanelCols + column) * 4 + p % 4)] =
          static_cast<std::int8_t>(value);
    }
    q.sums[static_cast<std::size_t>(j)] = sum;
  }
  return q;
}

ATTN_DISPATCH_LOWP_KERNELS(ATTN_GEMM_INT8_KERNELS)

}  // namespace attn::kernels
