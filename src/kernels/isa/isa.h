// Included first by every per-ISA kernel source. The Makefile compiles each
// such source once per ISA with -DATTN_ISA_LEVEL=0|1|2 and the matching
// target flags (the low-precision sources, src/kernels/isa/lowp/, and the
// table of an ISA's kernels, table.cpp, also with 3: avx512 + AVX512_VNNI,
// and 4: avx512 + AVX512_VNNI + AVX512_BF16); this header names the
// namespace and offers the intrinsics. ATTN_AVX512 is true from level 2,
// ATTN_VNNI from 3, ATTN_BF16 at 4.
#pragma once
#include <cstdint>

#if !defined(ATTN_ISA_LEVEL)
#error "per-ISA kernel sources are compiled with -DATTN_ISA_LEVEL=0|1|2|3|4 (see Makefile)"
#endif

#define ATTN_AVX512 (ATTN_ISA_LEVEL >= 2)
#define ATTN_VNNI (ATTN_ISA_LEVEL >= 3)
#define ATTN_BF16 (ATTN_ISA_LEVEL >= 4)

#if ATTN_ISA_LEVEL == 4
#define ATTN_ISA_NAMESPACE isa_avx512bf16
#elif ATTN_ISA_LEVEL == 3
#define ATTN_ISA_NAMESPACE isa_avx512vnni
#elif ATTN_ISA_LEVEL == 2
#define ATTN_ISA_NAMESPACE isa_avx512
#elif ATTN_ISA_LEVEL == 1
#define ATTN_ISA_NAMESPACE isa_avx2
#else
#define ATTN_ISA_NAMESPACE isa_scalar
#endif

// The namespace of the FP32 kernels this level runs: avx512's serves the
// levels above it (the FP32 sources are built for levels 0–2 only).
#if ATTN_ISA_LEVEL >= 2
#define ATTN_FP32_NAMESPACE isa_avx512
#else
#define ATTN_FP32_NAMESPACE ATTN_ISA_NAMESPACE
#endif

#if ATTN_ISA_LEVEL >= 1
#include <immintrin.h>
#endif

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which
// -W(maybe-)uninitialized reports as a use of an uninitialised value; code
// using them sits between these two.
#define ATTN_AVX512_WARNINGS_OFF                                                             \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define ATTN_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
