// The shape check of every SGEMM call, compiled once (gemm.cpp) and called
// first by each ISA's sgemm and sgemm_batched.
#pragma once
#include <cstdint>

#include "attn/kernels/gemm.h"

namespace attn::kernels {

// Leading dimensions are checked against the stored width, as BLAS does; a
// bad one would read or write out of bounds silently otherwise. Throws
// attn::Error naming the argument. batch < 0 is refused too.
void check_gemm_shape(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                      std::int64_t ldb, std::int64_t ldc, std::int64_t batch = 1);

}  // namespace attn::kernels
