#include "attn/core/cpu.h"

#include <cpuid.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

#include "attn/core/error.h"

namespace attn {
namespace {

unsigned long long read_xcr0() {
  unsigned int eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = ecx & (1u << 27);
  const bool fma = ecx & (1u << 12);
  const bool avx = ecx & (1u << 28);
  if (!osxsave || !avx) return f;
  const unsigned long long xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30), avx512vl = ebx & (1u << 31);
  f.avx2_fma = ymm_state && avx2 && fma;
  f.avx512 = f.avx2_fma && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  const bool avx512_vnni = ecx & (1u << 11);
  // AVX512_BF16 is leaf 7, sub-leaf 1, eax bit 5.
  const bool avx512_bf16 = __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5));
  f.avx512_vnni = f.avx512 && avx512_vnni;
  f.avx512_bf16 = f.avx512_vnni && avx512_bf16;
  return f;
}

std::atomic<int> g_active{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::scalar: return true;
    case Isa::avx2: return cpu_features().avx2_fma;
    case Isa::avx512: return cpu_features().avx512;
    case Isa::avx512vnni: return cpu_features().avx512_vnni;
    case Isa::avx512bf16: return cpu_features().avx512_bf16;
  }
  return false;
}

Isa best_isa() {
  if (isa_supported(Isa::avx512bf16)) return Isa::avx512bf16;
  if (isa_supported(Isa::avx512vnni)) return Isa::avx512vnni;
  if (isa_supported(Isa::avx512)) return Isa::avx512;
  if (isa_supported(Isa::avx2)) return Isa::avx2;
  return Isa::scalar;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512vnni: return "avx512vnni";
    case Isa::avx512bf16: return "avx512bf16";
  }
  return "?";
}

Isa parse_isa(std::string_view name) {
  if (name == "scalar") return Isa::scalar;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512") return Isa::avx512;
  if (name == "avx512vnni") return Isa::avx512vnni;
  if (name == "avx512bf16") return Isa::avx512bf16;
  throw Error("ATTN_ISA='" + std::string(name) + "' is not an ISA: use scalar, avx2, avx512, avx512vnni or avx512bf16");
}

void set_active_isa(Isa isa) {
  if (!isa_supported(isa))
    throw Error("ISA '" + std::string(isa_name(isa)) + "' is not supported by this CPU (best: " +
                std::string(isa_name(best_isa())) + "); unset ATTN_ISA or choose a lower one");
  g_active.store(static_cast<int>(isa));
}

CpuName cpu_name() {
  CpuName cpu;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (cpu.family >= 0) break;  // the first processor's block is enough
      continue;
    }
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name") cpu.model = value;
    if (key == "cpu family") cpu.family = std::atoi(value.c_str());
    if (key == "model") cpu.model_number = std::atoi(value.c_str());
  }
  return cpu;
}

Isa active_isa() {
  int current = g_active.load(std::memory_order_relaxed);
  if (current >= 0) return static_cast<Isa>(current);
  const char* forced = std::getenv("ATTN_ISA");
  if (forced && *forced) {
    set_active_isa(parse_isa(forced));
  } else {
    set_active_isa(best_isa());
  }
  return static_cast<Isa>(g_active.load());
}

}  // namespace attn
