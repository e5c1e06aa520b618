// The gemm kernels of one ISA build as a table of function pointers with
// the public signatures: gemm.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/gemm.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/gemm.h"

namespace attn::kernels {

struct GemmKernels {
  decltype(&kernels::sgemm_fp32) sgemm_fp32;
  decltype(&kernels::sgemm_fp32_batched) sgemm_fp32_batched;
};

namespace isa_scalar {
extern const GemmKernels gemm_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const GemmKernels gemm_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const GemmKernels gemm_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
