// The gemm_bf16 kernels of one ISA build as a table of function pointers with
// the public signatures: gemm_bf16.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/gemm_bf16.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/gemm_bf16.h"

namespace attn::kernels {

struct GemmBf16Kernels {
  decltype(&kernels::gemm_bf16) gemm_bf16;
  decltype(&kernels::gemm_bf16_batched) gemm_bf16_batched;
  decltype(&kernels::bf16_panel_cols) bf16_panel_cols;
  decltype(&kernels::pack_bf16_b_into) pack_bf16_b_into;
  decltype(&kernels::gemm_bf16_packed) gemm_bf16_packed;
};

namespace isa_scalar {
extern const GemmBf16Kernels gemm_bf16_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const GemmBf16Kernels gemm_bf16_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const GemmBf16Kernels gemm_bf16_kernels;
}  // namespace isa_avx512
namespace isa_avx512vnni {
extern const GemmBf16Kernels gemm_bf16_kernels;
}  // namespace isa_avx512vnni
namespace isa_avx512bf16 {
extern const GemmBf16Kernels gemm_bf16_kernels;
}  // namespace isa_avx512bf16

}  // namespace attn::kernels
