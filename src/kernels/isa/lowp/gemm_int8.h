// The gemm_int8 kernels of one ISA build as a table of function pointers with
// the public signatures: gemm_int8.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/gemm_int8.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/gemm_int8.h"

namespace attn::kernels {

struct GemmInt8Kernels {
  decltype(&kernels::gemm_int8) gemm_int8;
};

namespace isa_scalar {
extern const GemmInt8Kernels gemm_int8_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const GemmInt8Kernels gemm_int8_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const GemmInt8Kernels gemm_int8_kernels;
}  // namespace isa_avx512
namespace isa_avx512vnni {
extern const GemmInt8Kernels gemm_int8_kernels;
}  // namespace isa_avx512vnni
namespace isa_avx512bf16 {
extern const GemmInt8Kernels gemm_int8_kernels;
}  // namespace isa_avx512bf16

}  // namespace attn::kernels
