// Run-time choice between the per-ISA builds of a kernel family.
//
// Each family has a per-ISA source src/kernels/isa/<family>.cpp, compiled three
// times (scalar, avx2, avx512) into namespaces isa_scalar, isa_avx2 and
// isa_avx512, and a list of its functions in src/kernels/isa/<family>.inc.
// The family's dispatcher src/kernels/<family>.cpp includes that list once per
// namespace (ATTN_DECLARE_ISA_FUNCTIONS) and forwards each public call with
// ATTN_DISPATCH.
#pragma once
#include "attn/core/cpu.h"

#define ATTN_DISPATCH(function, ...)                                   \
  switch (::attn::active_isa()) {                                      \
    case ::attn::Isa::avx512: return isa_avx512::function(__VA_ARGS__); \
    case ::attn::Isa::avx2: return isa_avx2::function(__VA_ARGS__);     \
    default: return isa_scalar::function(__VA_ARGS__);                 \
  }
