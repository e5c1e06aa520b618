// Run-time choice between the per-ISA builds of a kernel family (after
// CTranslate2's cpu_isa.h).
//
// Each family has a per-ISA source src/kernels/isa/<family>.cpp, compiled three
// times (scalar, avx2, avx512) into namespaces isa_scalar, isa_avx2 and
// isa_avx512, and a kernel list in its public header
// (attn/kernels/kernel_list.h). The family's dispatcher src/kernels/<family>.cpp
// is one line, ATTN_DISPATCH_KERNELS(ATTN_<FAMILY>_KERNELS): the per-ISA
// declarations and a public function per kernel that calls the active ISA's.
// FP32 families run their avx512 build under avx512vnni and avx512bf16. The
// low-precision families (bf16, int8) are also compiled for those two
// (namespaces isa_avx512vnni, isa_avx512bf16) and dispatch with
// ATTN_DISPATCH_LOWP_KERNELS; a build without an instruction emulates its
// arithmetic exactly (bf16 below avx512bf16, int8 below avx512vnni).
#pragma once
#include "attn/core/cpu.h"
#include "attn/kernels/kernel_list.h"

#define ATTN_DISPATCH_CASES(function, vnni_namespace, bf16_namespace, ...)       \
  switch (::attn::active_isa()) {                                               \
    case ::attn::Isa::avx512bf16: return bf16_namespace::function(__VA_ARGS__);  \
    case ::attn::Isa::avx512vnni: return vnni_namespace::function(__VA_ARGS__);  \
    case ::attn::Isa::avx512: return isa_avx512::function(__VA_ARGS__);          \
    case ::attn::Isa::avx2: return isa_avx2::function(__VA_ARGS__);              \
    default: return isa_scalar::function(__VA_ARGS__);                          \
  }

#define ATTN_UNPAREN(...) __VA_ARGS__
#define ATTN_FORWARD_KERNEL(ret, name, params, args) \
  ret name params { ATTN_DISPATCH_CASES(name, isa_avx512, isa_avx512, ATTN_UNPAREN args) }
#define ATTN_FORWARD_LOWP_KERNEL(ret, name, params, args) \
  ret name params { ATTN_DISPATCH_CASES(name, isa_avx512vnni, isa_avx512bf16, ATTN_UNPAREN args) }

// The per-ISA declarations every family has.
#define ATTN_DECLARE_ISA_KERNELS(LIST) \
  namespace isa_scalar {               \
  LIST(ATTN_DECLARE_KERNEL)            \
  }                                    \
  namespace isa_avx2 {                 \
  LIST(ATTN_DECLARE_KERNEL)            \
  }                                    \
  namespace isa_avx512 {               \
  LIST(ATTN_DECLARE_KERNEL)            \
  }

#define ATTN_DISPATCH_KERNELS(LIST) \
  ATTN_DECLARE_ISA_KERNELS(LIST)    \
  LIST(ATTN_FORWARD_KERNEL)

#define ATTN_DISPATCH_LOWP_KERNELS(LIST) \
  ATTN_DECLARE_ISA_KERNELS(LIST)         \
  namespace isa_avx512vnni {             \
  LIST(ATTN_DECLARE_KERNEL)              \
  }                                      \
  namespace isa_avx512bf16 {             \
  LIST(ATTN_DECLARE_KERNEL)              \
  }                                      \
  LIST(ATTN_FORWARD_LOWP_KERNEL)
