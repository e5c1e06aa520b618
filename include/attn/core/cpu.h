// CPU feature detection and the choice of kernel ISA.
#pragma once
#include <string>
#include <string_view>

namespace attn {

// avx512vnni is avx512 plus AVX512_VNNI (vpdpbusd, the int8 dot product: Cascade
// Lake, Ice Lake); avx512bf16 adds AVX512_BF16 (vdpbf16ps: Cooper Lake, Sapphire
// Rapids, Zen 4). FP32 kernels run their avx512 build under both; the
// low-precision kernels have a build for each, and emulate what a level lacks.
enum class Isa { scalar = 0, avx2 = 1, avx512 = 2, avx512vnni = 3, avx512bf16 = 4 };

// Every ISA, lowest first.
inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512vnni, Isa::avx512bf16};

struct CpuFeatures {
  bool avx2_fma = false;     // AVX2 + FMA3, with OS support for ymm state
  bool avx512 = false;       // AVX-512 F/BW/DQ/VL, with OS support for zmm state
  bool avx512_vnni = false;  // avx512 plus AVX512_VNNI (vpdpbusd)
  bool avx512_bf16 = false;  // avx512_vnni plus AVX512_BF16 (vdpbf16ps)
};

// What this CPU (and OS) supports; computed once.
const CpuFeatures& cpu_features();

// The best ISA this CPU supports.
Isa best_isa();
bool isa_supported(Isa isa);

std::string_view isa_name(Isa isa);

// The CPU as /proc/cpuinfo names it (its first processor), for benchmarks and
// logs that must say which machine measured them: hosts of one vendor often
// share a model name ("AMD EPYC") and differ in family and model.
struct CpuName {
  std::string model = "unknown CPU";
  int family = -1, model_number = -1;
};
CpuName cpu_name();

// Parses "scalar" | "avx2" | "avx512" | "avx512vnni" | "avx512bf16"; throws Error otherwise.
Isa parse_isa(std::string_view name);

// The ISA the kernels use: ATTN_ISA from the environment if set (refused with
// an Error if this CPU lacks it), else best_isa(). Decided on first call.
Isa active_isa();
// Forces the kernels' ISA (tests use it to run every path); throws Error if
// the CPU lacks it.
void set_active_isa(Isa isa);

}  // namespace attn
