// The rows kernels of one ISA build as a table of function pointers with
// the public signatures: rows.cpp here, compiled once per ISA, defines one
// in each ISA's namespace; the dispatcher src/kernels/rows.cpp calls
// through the active ISA's (src/kernels/dispatch.h).
#pragma once
#include "attn/kernels/rows.h"

namespace attn::kernels {

struct RowsKernels {
  decltype(&kernels::strided_dots) strided_dots;
  decltype(&kernels::accumulate_rows) accumulate_rows;
};

namespace isa_scalar {
extern const RowsKernels rows_kernels;
}  // namespace isa_scalar
namespace isa_avx2 {
extern const RowsKernels rows_kernels;
}  // namespace isa_avx2
namespace isa_avx512 {
extern const RowsKernels rows_kernels;
}  // namespace isa_avx512

}  // namespace attn::kernels
