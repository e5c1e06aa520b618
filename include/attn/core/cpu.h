// CPU feature detection and the choice of kernel ISA.
#pragma once
#include <string_view>

namespace attn {

enum class Isa { scalar = 0, avx2 = 1, avx512 = 2 };

struct CpuFeatures {
  bool avx2_fma = false;  // AVX2 + FMA3, with OS support for ymm state
  bool avx512 = false;    // AVX-512 F/BW/DQ/VL, with OS support for zmm state
};

// What this CPU (and OS) supports; computed once.
const CpuFeatures& cpu_features();

// The best ISA this CPU supports.
Isa best_isa();
bool isa_supported(Isa isa);

std::string_view isa_name(Isa isa);
// Parses "scalar" | "avx2" | "avx512"; throws Error otherwise.
Isa parse_isa(std::string_view name);

// The ISA the kernels use: ATTN_ISA from the environment if set (refused with
// an Error if this CPU lacks it), else best_isa(). Decided on first call.
Isa active_isa();
// Forces the kernels' ISA (tests use it to run every path); throws Error if
// the CPU lacks it.
void set_active_isa(Isa isa);

}  // namespace attn
