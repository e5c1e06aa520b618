// Row softmax with a per-row length mask, row log-softmax, and their backwards.
// Each kernel is built per ISA and picked at run time (src/kernels/kernel_table.h).
// Threads: OpenMP over rows above ~16k elements, serial inside a parallel
// region; rows are independent, so results are bitwise the same for any
// thread count, also when called from inside a parallel region.
#pragma once
#include <cstdint>

namespace attn::kernels {

// x, y: [rows, cols]; valid: [rows] or nullptr; scale > 0. For each row r,
// y[r, j] = softmax_j(scale · x[r, j]) over j < valid[r]; columns j ≥ valid[r]
// get exactly 0. valid == nullptr means every column is valid; valid[r] is
// clamped to [0, cols]; a row with valid[r] == 0 is all zeros (never NaN).
// The max is subtracted first, so logits of any finite size are safe; −inf
// logits get probability 0. y may alias x.
void softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid,
                     float scale);

// y, dy, dx: [rows, cols]; valid as for the forward.
// dx[r, j] = scale · y[r, j] · (dy[r, j] − Σ_j' dy[r, j'] · y[r, j']), written
// (not accumulated); 0 where y is masked. dx may alias dy.
void softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,
                      const std::int32_t* valid, float scale);

// x, y: [rows, cols]. y[r, j] = x[r, j] − log Σ_j' exp(x[r, j']), every column
// valid (the output-vocabulary case, fused into the loss). y may alias x.
void log_softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols);

// y: the forward output; dy, dx: [rows, cols].
// dx[r, j] = dy[r, j] − exp(y[r, j]) · Σ_j' dy[r, j'], written (not
// accumulated). dx may alias dy.
void log_softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols);

}  // namespace attn::kernels
