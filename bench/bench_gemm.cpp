// attn's SGEMM against OpenBLAS cblas_sgemm, and attn's bf16 GEMM against
// both, measured side by side in one run.
//
//   bench_gemm [--json] [--samples N] [--threads 1,2] [--quick] [--cpu-time] [--settle-ms N]
//   bench_gemm --peak-only [--json] [--threads 1,2]    only the FMA peak (bench/twin_bench.sh)
//
// Each row times attn and OpenBLAS alternately (A B A B …) on the same
// operands and reports the median GFLOP/s of each, so drifts in the shared
// machine's load hit both sides alike. The FMA peak of this machine,
// measured in the same run, bounds both; the vdpbf16ps peak (when the CPU has
// AVX512_BF16) bounds the bf16 column, which runs in the same alternation
// (attn, attn bf16, OpenBLAS) under the best ISA. --cpu-time divides by the process's
// CPU time instead of wall time: on a machine shared with other work it shows
// the kernels' own speed, but only 1-thread rows mean that (threads waiting
// for each other spend CPU time too).
//
// Debian's OpenBLAS does not recognise this CPU and falls back to an SSE3
// kernel unless OPENBLAS_CORETYPE names one when the library loads; the
// program therefore re-executes itself with OPENBLAS_CORETYPE=SkylakeX when
// the variable is unset (it changes nothing in attn's code).
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "attn/core/cpu.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_bf16.h"
#include "attn/kernels/gemm_int8.h"

namespace {

using attn::kernels::Trans;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool g_cpu_time = false;  // --cpu-time

// Wall seconds, or with --cpu-time the process's CPU seconds.
double now_seconds() {
  if (!g_cpu_time) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

using attn::bench::median;

// ---- FMA peak: 16 independent accumulator chains per thread ----

__attribute__((target("avx512f"))) float fma_chains_avx512(long iterations) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.001f * i);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  alignas(64) float lanes[16];
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(long iterations) {
  __m256 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.001f * i);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  alignas(32) float lanes[8];
  __m256 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// 12 independent vdpbf16ps chains: 64 FLOP (32 bf16 pairs) per instruction.
__attribute__((target("avx512f,avx512bf16"))) float dpbf16_chains(long iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80), y = (__m512bh)_mm512_set1_epi32(0x33803380);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
  }
  alignas(64) float lanes[16];
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// 12 independent vpdpbusd chains: 128 int8 operations (64 u8×s8 products) per instruction.
__attribute__((target("avx512f,avx512vnni"))) float dpbusd_chains(long iterations) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i x = _mm512_set1_epi32(0x01010101), y = _mm512_set1_epi32(0x01FF01FF);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
  }
  __m512i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, acc[i]);
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  float total = 0;
  for (std::int32_t v : lanes) total += static_cast<float>(v);
  return total;
}

// Median GFLOP/s of chains(iterations) run on `threads` threads at once.
double chains_rate(int threads, int samples, float (*chains)(long), double flops_per_iteration) {
  const long iterations = 4'000'000;
  const double flops_per_thread = flops_per_iteration * static_cast<double>(iterations);
  std::vector<double> rates;
  volatile float sink = 0;
  for (int s = 0; s < samples; ++s) {
    const double start = now_seconds();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += chains(iterations);
    const double seconds = (now_seconds() - start) / (g_cpu_time ? threads : 1);
    rates.push_back(flops_per_thread * threads / seconds * 1e-9);
    sink = sink + total;
  }
  return median(rates);
}

// GFLOP/s of the vdpbf16ps loop; 0 without AVX512_BF16.
double bf16_peak(int threads, int samples) {
  return attn::cpu_features().avx512_bf16 ? chains_rate(threads, samples, &dpbf16_chains, 64.0 * 12) : 0.0;
}

// GOP/s of the vpdpbusd loop; 0 without AVX512_VNNI.
double int8_peak(int threads, int samples) {
  return attn::cpu_features().avx512_vnni ? chains_rate(threads, samples, &dpbusd_chains, 128.0 * 12) : 0.0;
}

// GFLOP/s of the FMA loop on `threads` threads (median of `samples`).
double fma_peak(int threads, int samples) {
  if (attn::cpu_features().avx512) return chains_rate(threads, samples, &fma_chains_avx512, 2.0 * 16 * 16);
  if (attn::cpu_features().avx2_fma) return chains_rate(threads, samples, &fma_chains_avx2, 2.0 * 8 * 16);
  return 0.0;
}

// ---- one row: attn and OpenBLAS on one shape, layout and thread count ----

// Both libraries keep their idle threads busy-waiting for a while after a call
// (libgomp spins a few ms; OpenBLAS's threads call sched_yield in a loop for
// 2^28 cycles, about 0.12 s here), which takes CPU from whichever runs next on
// this 2-core machine: with a 30 ms pause, attn's 2-thread samples taken
// after OpenBLAS's ran at a third of their speed now and then. A pause longer
// than both lets the other side's threads go to sleep first.
int g_settle_ms = 150;  // --settle-ms
void settle() {
  if (g_settle_ms > 0) usleep(static_cast<useconds_t>(g_settle_ms) * 1000);
}

struct Row {
  long m, n, k;
  Trans ta, tb;
  int threads;
  double attn_gflops = 0, bf16_gflops = 0, openblas_gflops = 0, max_rel_diff = 0, bf16_rel_diff = 0;
};

const char* layout_name(Trans ta, Trans tb) {
  if (ta == Trans::N) return tb == Trans::N ? "NN" : "NT";
  return tb == Trans::N ? "TN" : "TT";
}

using attn::bench::random_floats;

void measure(Row& row, int samples) {
  const long m = row.m, n = row.n, k = row.k;
  const long lda = row.ta == Trans::N ? k : m, ldb = row.tb == Trans::N ? n : k;
  const std::vector<float> a = random_floats(static_cast<std::size_t>(m * k), 1);
  const std::vector<float> b = random_floats(static_cast<std::size_t>(k * n), 2);
  std::vector<float> c_attn(static_cast<std::size_t>(m * n)), c_blas(static_cast<std::size_t>(m * n));
  std::vector<float> c_bf16(static_cast<std::size_t>(m * n));
  attn::set_threads(row.threads);
  openblas_set_num_threads(row.threads);
  auto run_attn = [&] {
    attn::kernels::sgemm_fp32(row.ta, row.tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c_attn.data(), n);
  };
  auto run_bf16 = [&] {
    attn::kernels::gemm_bf16(row.ta, row.tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c_bf16.data(), n);
  };
  auto run_blas = [&] {
    cblas_sgemm(CblasRowMajor, row.ta == Trans::N ? CblasNoTrans : CblasTrans,
                row.tb == Trans::N ? CblasNoTrans : CblasTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.data(), static_cast<int>(lda), b.data(), static_cast<int>(ldb), 0.0f,
                c_blas.data(), static_cast<int>(n));
  };
  // Warm up both (pack buffers, thread pools, page faults), then size one
  // sample to about 40 ms so short products are not timer noise.
  run_attn();
  run_bf16();
  run_blas();
  auto t0 = Clock::now();
  run_blas();
  const double once = seconds_since(t0);
  const int calls = std::max(1, static_cast<int>(0.04 / std::max(once, 1e-6)));
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * calls;
  const double time_scale = g_cpu_time ? 1.0 / row.threads : 1.0;
  std::vector<double> attn_rates, bf16_rates, blas_rates;
  for (int s = 0; s < samples; ++s) {
    settle();
    double start = now_seconds();
    for (int i = 0; i < calls; ++i) run_attn();
    attn_rates.push_back(flops / ((now_seconds() - start) * time_scale) * 1e-9);
    settle();
    start = now_seconds();
    for (int i = 0; i < calls; ++i) run_bf16();
    bf16_rates.push_back(flops / ((now_seconds() - start) * time_scale) * 1e-9);
    settle();
    start = now_seconds();
    for (int i = 0; i < calls; ++i) run_blas();
    blas_rates.push_back(flops / ((now_seconds() - start) * time_scale) * 1e-9);
  }
  row.attn_gflops = median(attn_rates);
  row.bf16_gflops = median(bf16_rates);
  row.openblas_gflops = median(blas_rates);
  double worst = 0, worst_bf16 = 0, scale = 0;
  for (std::size_t i = 0; i < c_attn.size(); ++i) scale = std::max(scale, static_cast<double>(std::fabs(c_blas[i])));
  for (std::size_t i = 0; i < c_attn.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(c_attn[i] - c_blas[i])) / std::max(scale, 1e-30));
    worst_bf16 = std::max(worst_bf16, static_cast<double>(std::fabs(c_bf16[i] - c_blas[i])) / std::max(scale, 1e-30));
  }
  row.max_rel_diff = worst;
  row.bf16_rel_diff = worst_bf16;
}

// Attention's many small products: attn's sgemm_fp32_batched against a loop of
// cblas_sgemm calls (OpenBLAS 0.3.21 has no batched SGEMM). Text output only.
void batched_table(const std::vector<int>& thread_counts, int samples) {
  struct BatchShape {
    const char* what;
    long m, n, k;
    Trans ta, tb;
  };
  const long batch = 256;  // e.g. 64 sentences × 4 heads
  const BatchShape shapes[] = {{"Q.K^T", 30, 30, 64, Trans::N, Trans::T},
                               {"P.V", 30, 64, 30, Trans::N, Trans::N},
                               {"dO.V^T", 30, 30, 64, Trans::N, Trans::T},
                               {"P^T.dO", 30, 64, 30, Trans::T, Trans::N}};
  std::printf("\nBatched products (batch %ld), GFLOP/s: attn sgemm_fp32_batched and gemm_bf16_batched vs a loop of "
              "cblas_sgemm\n",
              batch);
  std::printf("%-12s %4s %4s %4s %6s %7s %9s %9s %9s %7s %9s\n", "product", "M", "N", "K", "layout", "threads", "attn",
              "attn bf16", "OpenBLAS", "ratio", "bf16/attn");
  for (int threads : thread_counts)
    for (const BatchShape& s : shapes) {
      const long lda = s.ta == Trans::N ? s.k : s.m, ldb = s.tb == Trans::N ? s.n : s.k;
      const long sa = s.m * s.k, sb = s.k * s.n, sc = s.m * s.n;
      const std::vector<float> a = random_floats(static_cast<std::size_t>(sa * batch), 3);
      const std::vector<float> b = random_floats(static_cast<std::size_t>(sb * batch), 4);
      std::vector<float> c(static_cast<std::size_t>(sc * batch));
      attn::set_threads(threads);
      openblas_set_num_threads(threads);
      auto run_attn = [&] {
        attn::kernels::sgemm_fp32_batched(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, sa, b.data(), ldb, sb, 0.0f,
                                          c.data(), s.n, sc, batch);
      };
      auto run_bf16 = [&] {
        attn::kernels::gemm_bf16_batched(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, sa, b.data(), ldb, sb, 0.0f,
                                         c.data(), s.n, sc, batch);
      };
      auto run_blas = [&] {
        for (long i = 0; i < batch; ++i)
          cblas_sgemm(CblasRowMajor, s.ta == Trans::N ? CblasNoTrans : CblasTrans,
                      s.tb == Trans::N ? CblasNoTrans : CblasTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                      static_cast<int>(s.k), 1.0f, a.data() + i * sa, static_cast<int>(lda), b.data() + i * sb,
                      static_cast<int>(ldb), 0.0f, c.data() + i * sc, static_cast<int>(s.n));
      };
      run_attn();
      run_bf16();
      run_blas();
      const double start_once = now_seconds();
      run_blas();
      const int calls = std::max(1, static_cast<int>(0.04 / std::max(now_seconds() - start_once, 1e-6)));
      const double flops = 2.0 * s.m * s.n * s.k * batch * calls;
      std::vector<double> attn_rates, bf16_rates, blas_rates;
      for (int r = 0; r < samples; ++r) {
        settle();
        double start = now_seconds();
        for (int i = 0; i < calls; ++i) run_attn();
        attn_rates.push_back(flops / (now_seconds() - start) * 1e-9);
        settle();
        start = now_seconds();
        for (int i = 0; i < calls; ++i) run_bf16();
        bf16_rates.push_back(flops / (now_seconds() - start) * 1e-9);
        settle();
        start = now_seconds();
        for (int i = 0; i < calls; ++i) run_blas();
        blas_rates.push_back(flops / (now_seconds() - start) * 1e-9);
      }
      const double ra = median(attn_rates), rh = median(bf16_rates), rb = median(blas_rates);
      std::printf("%-12s %4ld %4ld %4ld %6s %7d %9.1f %9.1f %9.1f %7.2f %9.2f\n", s.what, s.m, s.n, s.k,
                  layout_name(s.ta, s.tb), threads, ra, rh, rb, ra / rb, rh / ra);
      std::fflush(stdout);
    }
}

// Weight products y = x·Wᵀ (the model's linear layers, W [N×K]) in int8:
// gemm_int8 (W quantized once, x quantized on every call) against attn's FP32
// sgemm on the same operands, alternating. Text output only.
// fma_peaks: per thread count, measured by the caller.
void int8_table(const std::vector<int>& thread_counts, int samples, const std::vector<double>& fma_peaks) {
  const long shapes[][3] = {{1, 1024, 256},   {5, 8000, 256},   {64, 1024, 256},  {320, 256, 256},
                            {320, 1024, 256}, {320, 8000, 256}, {320, 256, 1024}, {4096, 256, 1024}};
  std::printf("\nWeight products y = x·W^T in int8 (gemm_int8, W quantized once) vs attn FP32 sgemm, GOP/s "
              "(2·M·N·K per call)\n");
  std::printf("%6s %6s %6s %7s %9s %9s %9s %9s\n", "M", "N", "K", "threads", "attn", "int8", "int8/attn", "int8%peak");
  for (std::size_t ti = 0; ti < thread_counts.size(); ++ti) {
    const int threads = thread_counts[ti];
    const double peak = int8_peak(threads, 5), fma = fma_peaks[ti];
    std::printf("vpdpbusd peak, %d thread%s: %.0f GOP/s; FMA peak %.0f GFLOP/s (int8 ÷ FMA %.2fx)\n", threads,
                threads == 1 ? "" : "s", peak, fma, fma > 0 ? peak / fma : 0.0);
    for (const auto& s : shapes) {
      const long m = s[0], n = s[1], k = s[2];
      const std::vector<float> x = random_floats(static_cast<std::size_t>(m * k), 5);
      const std::vector<float> w = random_floats(static_cast<std::size_t>(n * k), 6);
      std::vector<float> y(static_cast<std::size_t>(m * n));
      const attn::kernels::QuantizedWeight q = attn::kernels::quantize_weight(w.data(), k, n, k);
      attn::set_threads(threads);
      auto run_attn = [&] {
        attn::kernels::sgemm_fp32(Trans::N, Trans::T, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n);
      };
      auto run_int8 = [&] { attn::kernels::gemm_int8(m, x.data(), k, q, 0.0f, y.data(), n); };
      run_attn();
      run_int8();
      const double start_once = now_seconds();
      run_attn();
      const int calls = std::max(1, static_cast<int>(0.04 / std::max(now_seconds() - start_once, 1e-6)));
      const double ops = 2.0 * m * n * k * calls;
      std::vector<double> attn_rates, int8_rates;
      for (int r = 0; r < samples; ++r) {
        settle();
        double start = now_seconds();
        for (int i = 0; i < calls; ++i) run_attn();
        attn_rates.push_back(ops / (now_seconds() - start) * 1e-9);
        settle();
        start = now_seconds();
        for (int i = 0; i < calls; ++i) run_int8();
        int8_rates.push_back(ops / (now_seconds() - start) * 1e-9);
      }
      const double ra = median(attn_rates), ri = median(int8_rates);
      std::printf("%6ld %6ld %6ld %7d %9.1f %9.1f %9.2f %8.0f%%\n", m, n, k, threads, ra, ri, ri / ra,
                  peak > 0 ? 100.0 * ri / peak : 0.0);
      std::fflush(stdout);
    }
  }
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line.substr(0, line.find(' ', line.find(' ', line.find(' ') + 1) + 1));
}

std::vector<int> parse_threads(const std::string& list) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = list.find(',', pos);
    out.push_back(std::stoi(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int run(int argc, char** argv) {
  bool json = false, peak_only = false, int8_only = false;
  int samples = 9;
  std::vector<int> thread_counts = {1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json")
      json = true;
    else if (arg == "--peak-only")
      peak_only = true;
    else if (arg == "--int8-only")
      int8_only = true;
    else if (arg == "--quick")
      samples = 3;
    else if (arg == "--cpu-time")
      g_cpu_time = true;
    else if (arg == "--settle-ms" && i + 1 < argc)
      g_settle_ms = std::max(0, std::stoi(argv[++i]));
    else if (arg == "--samples" && i + 1 < argc)
      samples = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--threads" && i + 1 < argc)
      thread_counts = parse_threads(argv[++i]);
    else {
      std::fprintf(
          stderr,
          "usage: bench_gemm [--json] [--peak-only] [--int8-only] [--samples N] [--quick] [--threads 1,2] [--cpu-time] "
          "[--settle-ms N]\n");
      return 2;
    }
  }
  const std::string core = openblas_get_corename();
  const long shapes[][3] = {
      {4096, 256, 256}, {4096, 1024, 256}, {4096, 256, 1024}, {4096, 8000, 256}, {1024, 1024, 1024}};
  const Trans layouts[][2] = {{Trans::N, Trans::N}, {Trans::N, Trans::T}, {Trans::T, Trans::N}};

  std::vector<double> peaks, peaks_bf16;
  for (int t : thread_counts) peaks.push_back(fma_peak(t, 9));
  if (int8_only) {
    int8_table(thread_counts, samples, peaks);
    return 0;
  }
  for (int t : thread_counts) peaks_bf16.push_back(bf16_peak(t, 9));
  if (peak_only) {
    const char* isa = attn::cpu_features().avx512 ? "avx512" : "avx2";
    for (std::size_t i = 0; i < thread_counts.size(); ++i) {
      if (json)
        std::printf("{\"threads\": %d, \"fma_peak_gflops\": %.1f, \"isa\": \"%s\", \"timing\": \"%s\"}\n",
                    thread_counts[i], peaks[i], isa, g_cpu_time ? "cpu" : "wall");
      else
        std::printf("FMA peak, %d thread%s: %.0f GFLOP/s (%s)\n", thread_counts[i], thread_counts[i] == 1 ? "" : "s",
                    peaks[i], isa);
    }
    return 0;
  }
  if (!json) {
    std::printf("attn SGEMM vs OpenBLAS cblas_sgemm (row-major, alpha 1, beta 0), GFLOP/s\n");
    std::printf("attn ISA %s; OpenBLAS core %s (%s)\n", std::string(attn::isa_name(attn::active_isa())).c_str(),
                core.c_str(), openblas_get_config());
    std::printf("medians of %d interleaved samples (each ~40 ms, %d ms pause before each), %s time; load average at "
                "start %s\n",
                samples, g_settle_ms, g_cpu_time ? "CPU" : "wall", load_average().c_str());
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    std::printf("OpenMP waiting: GOMP_SPINCOUNT=%s OMP_WAIT_POLICY=%s\n", spin ? spin : "(default)",
                wait ? wait : "(default)");
    for (std::size_t i = 0; i < thread_counts.size(); ++i)
      std::printf("FMA peak, %d thread%s: %.0f GFLOP/s; vdpbf16ps peak: %.0f GFLOP/s (%.2fx)\n", thread_counts[i],
                  thread_counts[i] == 1 ? "" : "s", peaks[i], peaks_bf16[i], peaks_bf16[i] / peaks[i]);
    std::printf(
        "bf16: attn gemm_bf16 (operands rounded to bf16, FP32 sums; ISA %s); diff: max |C - OpenBLAS| / max |C|\n",
        std::string(attn::isa_name(attn::active_isa())).c_str());
    std::printf("\n%6s %6s %6s %6s %7s %9s %9s %9s %7s %7s %9s %9s %9s %9s\n", "M", "N", "K", "layout", "threads",
                "attn", "attn bf16", "OpenBLAS", "ratio", "%peak", "bf16/attn", "bf16%peak", "max diff", "bf16 diff");
    std::fflush(stdout);
  }
  std::vector<Row> rows;
  for (std::size_t ti = 0; ti < thread_counts.size(); ++ti)
    for (const auto& s : shapes)
      for (const auto& layout : layouts) {
        Row row{s[0], s[1], s[2], layout[0], layout[1], thread_counts[ti]};
        measure(row, samples);
        rows.push_back(row);
        if (!json) {
          std::printf("%6ld %6ld %6ld %6s %7d %9.1f %9.1f %9.1f %7.2f %6.0f%% %9.2f %8.0f%% %9.1e %9.1e\n", row.m,
                      row.n, row.k, layout_name(row.ta, row.tb), row.threads, row.attn_gflops, row.bf16_gflops,
                      row.openblas_gflops, row.attn_gflops / row.openblas_gflops, 100.0 * row.attn_gflops / peaks[ti],
                      row.bf16_gflops / row.attn_gflops,
                      peaks_bf16[ti] > 0 ? 100.0 * row.bf16_gflops / peaks_bf16[ti] : 0.0, row.max_rel_diff,
                      row.bf16_rel_diff);
          std::fflush(stdout);
        }
      }
  if (!json && !g_cpu_time) batched_table(thread_counts, samples);
  if (!json && !g_cpu_time) int8_table(thread_counts, samples, peaks);
  if (json) {
    std::printf("[\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const double peak = peaks[static_cast<std::size_t>(
          std::find(thread_counts.begin(), thread_counts.end(), r.threads) - thread_counts.begin())];
      std::printf("  {\"m\": %ld, \"n\": %ld, \"k\": %ld, \"layout\": \"%s\", \"threads\": %d, \"attn_gflops\": %.2f, "
                  "\"openblas_gflops\": %.2f, \"ratio\": %.3f, \"bf16_gflops\": %.2f, \"bf16_over_attn\": %.3f, "
                  "\"openblas_core\": \"%s\", \"fma_peak_gflops\": %.1f, \"timing\": \"%s\"}%s\n",
                  r.m, r.n, r.k, layout_name(r.ta, r.tb), r.threads, r.attn_gflops, r.openblas_gflops,
                  r.attn_gflops / r.openblas_gflops, r.bf16_gflops, r.bf16_gflops / r.attn_gflops, core.c_str(), peak,
                  g_cpu_time ? "cpu" : "wall", i + 1 < rows.size() ? "," : "");
    }
    std::printf("]\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // OpenBLAS picks its kernel when it loads, before main: re-executing is the
  // only way to choose it from inside the program.
  // The core is the best this CPU can run (SkylakeX would fault without AVX-512).
  const char* best_core = attn::cpu_features().avx512     ? "SkylakeX"
                          : attn::cpu_features().avx2_fma ? "Haswell"
                                                          : nullptr;
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr && best_core != nullptr) {
    setenv("OPENBLAS_CORETYPE", best_core, 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "bench_gemm: could not re-execute with OPENBLAS_CORETYPE=%s: %s\n", best_core,
                 std::strerror(errno));
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gemm: %s\n", e.what());
    return 1;
  }
}
