// Run-time choice between the per-ISA builds of a kernel family (after
// CTranslate2's cpu_isa.h).
//
// Each family has a per-ISA source src/kernels/isa/<family>.cpp, compiled three
// times (scalar, avx2, avx512) into namespaces isa_scalar, isa_avx2 and
// isa_avx512, and a kernel list in its public header
// (attn/kernels/kernel_list.h). The family's dispatcher src/kernels/<family>.cpp
// is one line, ATTN_DISPATCH_KERNELS(ATTN_<FAMILY>_KERNELS): the per-ISA
// declarations and a public function per kernel that calls the active ISA's.
#pragma once
#include "attn/core/cpu.h"
#include "attn/kernels/kernel_list.h"

#define ATTN_DISPATCH(function, ...)                                   \
  switch (::attn::active_isa()) {                                      \
    case ::attn::Isa::avx512: return isa_avx512::function(__VA_ARGS__); \
    case ::attn::Isa::avx2: return isa_avx2::function(__VA_ARGS__);     \
    default: return isa_scalar::function(__VA_ARGS__);                 \
  }

#define ATTN_UNPAREN(...) __VA_ARGS__
#define ATTN_FORWARD_KERNEL(ret, name, params, args) \
  ret name params { ATTN_DISPATCH(name, ATTN_UNPAREN args) }

#define ATTN_DISPATCH_KERNELS(LIST)  \
  namespace isa_scalar {             \
  LIST(ATTN_DECLARE_KERNEL)          \
  }                                  \
  namespace isa_avx2 {               \
  LIST(ATTN_DECLARE_KERNEL)          \
  }                                  \
  namespace isa_avx512 {             \
  LIST(ATTN_DECLARE_KERNEL)          \
  }                                  \
  LIST(ATTN_FORWARD_KERNEL)
