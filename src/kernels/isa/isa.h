// Included first by every per-ISA kernel source. The Makefile compiles each
// such source once per ISA with -DATTN_ISA_LEVEL=0|1|2 and the matching
// target flags; this header names the namespace and offers the intrinsics.
#pragma once
#include <cstdint>

#if !defined(ATTN_ISA_LEVEL)
#error "per-ISA kernel sources are compiled with -DATTN_ISA_LEVEL=0|1|2 (see Makefile)"
#endif

#if ATTN_ISA_LEVEL == 2
#define ATTN_ISA_NAMESPACE isa_avx512
#elif ATTN_ISA_LEVEL == 1
#define ATTN_ISA_NAMESPACE isa_avx2
#else
#define ATTN_ISA_NAMESPACE isa_scalar
#endif

#if ATTN_ISA_LEVEL >= 1
#include <immintrin.h>
#endif
