// Helpers shared by the tests: every ISA path, thread counts, random data,
// double-precision comparisons and central finite differences.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdlib.h>
#include <string>
#include <vector>

#include "attn/core/cpu.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"

namespace attn::test {

// How often `needle` occurs in `text`, without overlaps.
inline std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Whether this process runs under AddressSanitizer. Asked at run time: the
// tests' sources are compiled once, without the sanitizers, and linked into
// both builds (Makefile), so __SANITIZE_ADDRESS__ would say nothing. ASan's
// runtime is in the process exactly when the library and binary under test
// were built with it.
inline bool under_address_sanitizer() { return dlsym(RTLD_DEFAULT, "__asan_init") != nullptr; }

// One tab-separated line "attn-test-<status>\tNAME\tREASON" that tools/run-tests.sh reads:
// Catch2 v2 has no status but passed and failed.
inline void report_test_status(const char* status, const std::string& reason) {
  std::printf("attn-test-%s\t%s\t%s\n", status, Catch::getResultCapture().getCurrentTestName().c_str(), reason.c_str());
  std::fflush(stdout);
}
// A test that cannot run here says so and returns: run-tests.sh counts it as skipped,
// not passed, with the reason (say how to enable it).
inline void report_skip(const std::string& reason) { report_test_status("skipped", reason); }
// A test that ran only in part here (an ISA this CPU lacks): it still counts, and
// run-tests.sh lists what it could not cover.
inline void report_partial(const std::string& reason) { report_test_status("partial", reason); }
#define ATTN_SKIP(reason)              \
  do {                                 \
    ::attn::test::report_skip(reason); \
    return;                            \
  } while (0)

// Which kernel builds a test runs. The FP32 kernels have three (scalar, avx2,
// avx512) and run the avx512 one under avx512vnni and avx512bf16 too; only the
// bf16 and int8 products (src/kernels/isa/lowp/) differ on those two levels.
enum class KernelBuilds { fp32, low_precision };

// Whether `isa` has a build of its own among `builds`.
inline bool has_own_build(Isa isa, KernelBuilds builds) {
  return builds == KernelBuilds::low_precision || isa <= Isa::avx512;
}

// The ISAs of `builds` this CPU supports, one per distinct build, lowest first.
inline std::vector<Isa> supported_isas(KernelBuilds builds = KernelBuilds::fp32) {
  std::vector<Isa> isas;
  for (Isa isa : kAllIsas)
    if (isa_supported(isa) && has_own_build(isa, builds)) isas.push_back(isa);
  return isas;
}

// Runs body(isa, threads) on every supported ISA of `builds` with 1 and 2
// threads, and reports the builds this CPU cannot run as not covered here.
inline void for_each_isa_and_threads(const std::function<void(Isa, int)>& body,
                                     KernelBuilds builds = KernelBuilds::fp32) {
  const Isa saved_isa = active_isa();
  const int saved_threads = num_threads();
  for (Isa isa : supported_isas(builds)) {
    for (int threads : {1, 2}) {
      set_active_isa(isa);
      set_threads(threads);
      INFO("isa " << isa_name(isa) << ", threads " << threads);
      body(isa, threads);
    }
  }
  set_active_isa(saved_isa);
  set_threads(saved_threads);
  for (Isa isa : kAllIsas)
    if (!isa_supported(isa) && has_own_build(isa, builds))
      report_partial("ISA " + std::string(isa_name(isa)) + " not on this CPU: its kernel path is not tested here");
}

// n floats uniform in [lo, hi), reproducible from seed.
inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// Largest |a − b| / (atol + rtol·|b|) over all elements; ≤ 1 means close.
inline double max_scaled_error(const float* a, const double* b, std::size_t n, double atol, double rtol) {
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::abs(static_cast<double>(a[i]) - b[i]) / (atol + rtol * std::abs(b[i]));
    if (!(err <= worst)) worst = err;  // NaN propagates as the worst
  }
  return worst;
}

inline void require_close(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol) {
  REQUIRE(got.size() == want.size());
  std::size_t worst_index = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]) / (atol + rtol * std::abs(want[i]));
    if (!(err <= worst)) {
      worst = err;
      worst_index = i;
    }
  }
  INFO("worst at " << worst_index << ": got " << got[worst_index] << ", want " << want[worst_index]);
  REQUIRE(worst <= 1.0);
}

// Central finite difference of a scalar function of x at index i, in double.
inline double central_difference(const std::function<double()>& loss, double& x, double h = 1e-5) {
  const double saved = x;
  x = saved + h;
  const double up = loss();
  x = saved - h;
  const double down = loss();
  x = saved;
  return (up - down) / (2 * h);
}

// A fresh folder under the system's temporary directory, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "attn-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string write(const std::string& name, const std::string& content) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ / name, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace attn::test
