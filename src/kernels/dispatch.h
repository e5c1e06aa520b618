// Run-time choice between the per-ISA builds of a kernel family (after
// CTranslate2's cpu_isa.h).
//
// Each family has a per-ISA source src/kernels/isa/<family>.cpp, compiled
// once per ISA into its namespace (isa_scalar, isa_avx2, isa_avx512; the
// low-precision families in isa/lowp/ also into isa_avx512vnni and
// isa_avx512bf16). Its header isa/<family>.h declares the table of that
// build's kernels, a struct of function pointers with the public signatures,
// once per namespace. The family's dispatcher src/kernels/<family>.cpp defines
// each public kernel as a call through the table active_build picks.
//
// FP32 families run their avx512 build under avx512vnni and avx512bf16. A
// low-precision build without an instruction emulates its arithmetic exactly
// (bf16 below avx512bf16, int8 below avx512vnni).
#pragma once
#include "attn/core/cpu.h"

namespace attn::kernels {

// The build of the ISA the kernels use now (active_isa(), which the ATTN_ISA
// environment variable and set_active_isa override).
template <typename Table>
const Table& active_build(const Table& scalar, const Table& avx2, const Table& avx512, const Table& avx512vnni,
                          const Table& avx512bf16) {
  switch (active_isa()) {
    case Isa::avx512bf16: return avx512bf16;
    case Isa::avx512vnni: return avx512vnni;
    case Isa::avx512: return avx512;
    case Isa::avx2: return avx2;
    case Isa::scalar: break;
  }
  return scalar;
}

// An FP32 family: its avx512 build serves the two ISAs above it.
template <typename Table>
const Table& active_build(const Table& scalar, const Table& avx2, const Table& avx512) {
  return active_build(scalar, avx2, avx512, avx512, avx512);
}

}  // namespace attn::kernels
