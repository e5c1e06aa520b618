// int8 products for decoding: y = x·Wᵀ with W (n×k, a weight) quantized once
// per output row and x quantized per row at run time, multiplied as u8 × s8
// on AVX512_VNNI's vpdpbusd (ISA avx512vnni and up) or exactly emulated elsewhere.
//
// W: symmetric per row, scale_w[j] = max|W[j,:]| / 127, wq = round(W / scale_w)
// in [−127, 127]. x: symmetric per row, scale_x[i] = max|x[i,:]| / 127,
// xq = round(x · (127 / max|x[i,:]|)) in [−127, 127], fed as xq + 128 (u8); the
// sums then hold 128·Σwq too, which the stored row sums take back out:
//   y[i][j] = float(Σ (xq+128)·wq − 128·Σ wq) · scale_x[i] · scale_w[j]
// (rounding: to nearest even throughout). Integer sums are exact, so every
// ISA and thread count gives the same bits. gemm_int8 is built per ISA and
// picked at run time (src/kernels/kernel_table.h).
#pragma once
#include <cstdint>
#include <vector>

#include "attn/core/tensor.h"

namespace attn::kernels {

// Output columns per packed panel (two zmm of int32 sums).
inline constexpr std::int64_t kInt8PanelCols = 32;

// A weight W (n rows of k) in the layout the int8 products read: panels of
// kInt8PanelCols rows of W, each ⌈k/4⌉ quads deep: byte
//   panel p, quad q, column c, byte b = wq[32p + c][4q + b]
// at packed[((p·quads + q)·32 + c)·4 + b]; zero past n and k.
struct QuantizedWeight {
  std::int64_t n = 0, k = 0, quads = 0;
  std::vector<std::int8_t> packed;
  std::vector<float> scales;       // [n] scale_w
  std::vector<std::int32_t> sums;  // [n] Σ wq over the row
};

// One row of k weights, symmetric: writes out[p] = round(row[p] / scale) in
// [−127, 127] and returns scale = max|row| / 127 (0, and zeros, for a row of
// zeros). Non-finite weights are refused (attn::Error). Dequantized values
// q·scale quantize back to the same q. out: [k].
float quantize_row(const float* row, std::int64_t k, std::int8_t* out);

// W: n rows of k floats, rows ldw apart, each row by quantize_row.
QuantizedWeight quantize_weight(const float* w, std::int64_t ldw, std::int64_t n, std::int64_t k);
// W quantized already (an int8 model file's weights): n rows of k values in
// [−127, 127], rows ldq apart, and their scales [n]; packed as quantize_weight
// packs, without a round trip through FP32.
QuantizedWeight pack_quantized_weight(const std::int8_t* wq, std::int64_t ldq, const float* scales, std::int64_t n,
                                      std::int64_t k);
// Row j of W's int8 values as packed (out: [w.k]): the rows of a tied
// embedding table are gathered from its output projection's form.
void unpack_row(const QuantizedWeight& w, std::int64_t j, std::int8_t* out);

// y[m×n] = x[m×k]·Wᵀ (+ beta·y when beta ≠ 0: fma(beta, y, product)), x's rows
// ldx apart, y's ldy (y not aliasing x); W quantized (k must be w.k). A row of
// x with a non-finite value gives NaN in its row of y (it is quantized as
// zeros). Threads: OpenMP over tiles of y, one thread inside a parallel region.
void gemm_int8(std::int64_t m, const float* x, std::int64_t ldx, const QuantizedWeight& w, float beta, float* y,
               std::int64_t ldy);

}  // namespace attn::kernels
