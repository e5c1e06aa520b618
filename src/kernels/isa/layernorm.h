// The layernorm kernels of one ISA build as a table of function pointers with
// the public signatures: layernorm.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/layernorm.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/layernorm.h"

namespace attn::kernels {

struct LayernormKernels {
  decltype(&kernels::layernorm_forward) layernorm_forward;
  decltype(&kernels::layernorm_backward) layernorm_backward;
};

namespace isa_scalar {
extern const LayernormKernels layernorm_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const LayernormKernels layernorm_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const LayernormKernels layernorm_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
