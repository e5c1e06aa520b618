// The elementwise kernels of one ISA build as a table of function pointers with
// the public signatures: elementwise.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/elementwise.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/elementwise.h"

namespace attn::kernels {

struct ElementwiseKernels {
  decltype(&kernels::add) add;
  decltype(&kernels::scale) scale;
  decltype(&kernels::axpy) axpy;
  decltype(&kernels::add_row_vector) add_row_vector;
  decltype(&kernels::sum_rows) sum_rows;
  decltype(&kernels::sum) sum;
  decltype(&kernels::sum_squares) sum_squares;
  decltype(&kernels::max_value) max_value;
  decltype(&kernels::all_finite) all_finite;
};

namespace isa_scalar {
extern const ElementwiseKernels elementwise_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const ElementwiseKernels elementwise_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const ElementwiseKernels elementwise_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
