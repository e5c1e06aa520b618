// The activation kernels of one ISA build as a table of function pointers with
// the public signatures: activation.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/activation.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/activation.h"

namespace attn::kernels {

struct ActivationKernels {
  decltype(&kernels::activation_forward) activation_forward;
  decltype(&kernels::activation_backward) activation_backward;
  decltype(&kernels::bias_activation_forward) bias_activation_forward;
};

namespace isa_scalar {
extern const ActivationKernels activation_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const ActivationKernels activation_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const ActivationKernels activation_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
