// One GEMM in stride form, as the public entry points (gemm.cpp) hand it to
// an ISA's product kernels once its shape is checked:
//   op(A)[i][p] = a[i·a_row + p·a_step], op(B)[p][j] = b[j·b_col + p·b_step],
//   C[i][j] = c[i·ldc + j];  C = alpha · op(A)·op(B) + beta · C over m×n×k.
// A plain struct, so that code built for every ISA can share it (an inline
// function compiled with another ISA's flags must not be merged by the linker).
#pragma once
#include <cstdint>

namespace attn::kernels {

struct Product {
  std::int64_t m, n, k;
  float alpha;
  const float* a;
  std::int64_t a_row, a_step;
  const float* b;
  std::int64_t b_col, b_step;
  float beta;
  float* c;
  std::int64_t ldc;
};

// Below this many multiply-adds a product runs on one thread: waking the
// team costs more than it gives.
inline constexpr std::int64_t kParallelMinMacs = std::int64_t{1} << 18;

}  // namespace attn::kernels
