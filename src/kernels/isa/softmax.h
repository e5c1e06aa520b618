// The softmax kernels of one ISA build as a table of function pointers with
// the public signatures: softmax.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/softmax.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/softmax.h"

namespace attn::kernels {

struct SoftmaxKernels {
  decltype(&kernels::softmax_forward) softmax_forward;
  decltype(&kernels::softmax_backward) softmax_backward;
  decltype(&kernels::log_softmax_forward) log_softmax_forward;
  decltype(&kernels::log_softmax_backward) log_softmax_backward;
};

namespace isa_scalar {
extern const SoftmaxKernels softmax_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const SoftmaxKernels softmax_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const SoftmaxKernels softmax_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
