// The adam kernels of one ISA build as a table of function pointers with
// the public signatures: adam.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/adam.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/adam.h"

namespace attn::kernels {

struct AdamKernels {
  decltype(&kernels::adam_update) adam_update;
};

namespace isa_scalar {
extern const AdamKernels adam_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const AdamKernels adam_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const AdamKernels adam_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
