// Weight quantization for the int8 products (their kernels: isa/lowp/gemm_int8.cpp).
#include "attn/kernels/gemm_int8.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
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

namespace {

QuantizedWeight empty_packed(std::int64_t n, std::int64_t k) {
  QuantizedWeight q;
  q.n = n;
  q.k = k;
  q.quads = (k + 3) / 4;
  const std::int64_t panels = (n + kInt8PanelCols - 1) / kInt8PanelCols;
  q.packed.assign(static_cast<std::size_t>(panels * q.quads * kInt8PanelCols * 4), 0);
  q.scales.resize(static_cast<std::size_t>(n));
  q.sums.resize(static_cast<std::size_t>(n));
  return q;
}

// Row j of W, quantized (row: [k]), into the panels, with its scale and sum.
void pack_row(const std::int8_t* row, float scale, std::int64_t j, QuantizedWeight& q) {
  std::int32_t sum = 0;
  const std::int64_t panel = j / kInt8PanelCols, column = j % kInt8PanelCols;
  for (std::int64_t p = 0; p < q.k; ++p) {
    sum += row[p];
    q.packed[static_cast<std::size_t>(((panel * q.quads + p / 4) * kInt8PanelCols + column) * 4 + p % 4)] = row[p];
  }
  q.scales[static_cast<std::size_t>(j)] = scale;
  q.sums[static_cast<std::size_t>(j)] = sum;
}

void check_shape(const char* what, std::int64_t ld, std::int64_t n, std::int64_t k) {
  if (n < 0 || k < 0 || ld < std::max<std::int64_t>(k, 1))
    throw Error(std::string(what) + ": bad shape " + std::to_string(n) + "×" + std::to_string(k) + ", ld " +
                std::to_string(ld));
}

}  // namespace

QuantizedWeight quantize_weight(const float* w, std::int64_t ldw, std::int64_t n, std::int64_t k) {
  check_shape("quantize_weight", ldw, n, k);
  QuantizedWeight q = empty_packed(n, k);
  std::vector<std::int8_t> row(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < n; ++j) {
    float scale = 0.0f;
    try {
      scale = quantize_row(w + j * ldw, k, row.data());
    } catch (const Error& e) {
      throw Error("quantize_weight: row " + std::to_string(j) + ": " + e.what());
    }
    pack_row(row.data(), scale, j, q);
  }
  return q;
}

QuantizedWeight pack_quantized_weight(const std::int8_t* wq, std::int64_t ldq, const float* scales, std::int64_t n,
                                      std::int64_t k) {
  check_shape("pack_quantized_weight", ldq, n, k);
  QuantizedWeight q = empty_packed(n, k);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t p = 0; p < k; ++p)
      if (wq[j * ldq + p] < -127) throw Error("pack_quantized_weight: row " + std::to_string(j) + " holds −128");
    pack_row(wq + j * ldq, scales[j], j, q);
  }
  return q;
}

void unpack_row(const QuantizedWeight& w, std::int64_t j, std::int8_t* out) {
  if (j < 0 || j >= w.n) throw std::out_of_range("unpack_row: row " + std::to_string(j) + " of " + std::to_string(w.n));
  const std::int8_t* panel = w.packed.data() + (j / kInt8PanelCols) * w.quads * kInt8PanelCols * 4 +
                             (j % kInt8PanelCols) * 4;
  for (std::int64_t p = 0; p < w.k; ++p) out[p] = panel[(p / 4) * kInt8PanelCols * 4 + p % 4];
}

}  // namespace attn::kernels
