// CPU feature detection and the choice of kernel ISA.
#pragma once
#include <string_view>

namespace attn {

// avx512bf16 is avx512 plus AVX512_BF16 and AVX512_VNNI (the bf16 and int8
// dot-product instructions). FP32 kernels run the avx512 build under it; the
// low-precision kernels have a build of their own, and emulate it below it.
enum class Isa { scalar = 0, avx2 = 1, avx512 = 2, avx512bf16 = 3 };

// Every ISA, lowest first.
inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512bf16};

struct CpuFeatures {
  bool avx2_fma = false;  // AVX2 + FMA3, with OS support for ymm state
  bool avx512 = false;    // AVX-512 F/BW/DQ/VL, with OS support for zmm state
  bool avx512_bf16 = false;  // avx512 plus AVX512_BF16 (vdpbf16ps) and AVX512_VNNI (vpdpbusd)
};

// What this CPU (and OS) supports; computed once.
const CpuFeatures& cpu_features();

// The best ISA this CPU supports.
Isa best_isa();
bool isa_supported(Isa isa);

std::string_view isa_name(Isa isa);
// Parses "scalar" | "avx2" | "avx512" | "avx512bf16"; throws Error otherwise.
Isa parse_isa(std::string_view name);

// The ISA the kernels use: ATTN_ISA from the environment if set (refused with
// an Error if this CPU lacks it), else best_isa(). Decided on first call.
Isa active_isa();
// Forces the kernels' ISA (tests use it to run every path); throws Error if
// the CPU lacks it.
void set_active_isa(Isa isa);

}  // namespace attn
