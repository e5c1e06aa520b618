// The dropout kernels of one ISA build as a table of function pointers with
// the public signatures: dropout.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/dropout.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/dropout.h"

namespace attn::kernels {

struct DropoutKernels {
  decltype(&kernels::dropout_forward) dropout_forward;
  decltype(&kernels::dropout_backward) dropout_backward;
  decltype(&kernels::dropout_backward_write) dropout_backward_write;
};

namespace isa_scalar {
extern const DropoutKernels dropout_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const DropoutKernels dropout_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const DropoutKernels dropout_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
