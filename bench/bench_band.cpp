// ConvSAN's banded attention kernel against global attention, forward and
// forward+backward, on the same q, k, v: time and the bytes of the stored
// attention weights as T grows (B·T ≈ 4096 tokens, H = 4, d_h = 64).
//
//   bench_band [--samples N] [--threads N]
//
// The band costs O(T·N·M·d_h) time and O(T·N·M) weights (window M, head
// window N): per token it is flat in T. Global attention costs O(T²·d_h) and
// O(T²): per token it grows linearly with T. Medians of N samples (fewer for
// the slowest global rows, whose every sample takes seconds).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "attn/core/cpu.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/csan/band_attention.h"

namespace {

using namespace attn;
using namespace attn::nn;
using Clock = std::chrono::steady_clock;

using bench::median;
using bench::random_floats;

struct Timing {
  double forward_ms = 0, total_ms = 0;  // medians: forward alone, forward + backward
};

// Runs forward() and backward() `samples` times (after one warm-up) and takes
// the medians; the backward's accumulation target is reset outside the timing.
template <class Forward, class Backward, class Reset>
Timing measure(int samples, Forward forward, Backward backward, Reset reset) {
  std::vector<double> fwd, total;
  for (int s = 0; s <= samples; ++s) {
    reset();
    const auto t0 = Clock::now();
    forward();
    const auto t1 = Clock::now();
    backward();
    const auto t2 = Clock::now();
    if (s == 0) continue;  // warm-up: page faults of fresh buffers, caches
    fwd.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    total.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  return {median(fwd), median(total)};
}

std::string human_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 7, threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) {
      samples = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_band [--samples N] [--threads N]\n");
      return 2;
    }
  }
  set_threads(threads);
  const std::int64_t H = 4, dh = 64, d = H * dh, window = 11, tokens = 4096;
  std::printf("band attention (ConvSAN) vs global attention: H %ld, d_h %ld, B·T ≈ %ld, %d thread%s, ISA %s\n",
              static_cast<long>(H), static_cast<long>(dh), static_cast<long>(tokens), num_threads(),
              num_threads() == 1 ? "" : "s", std::string(isa_name(active_isa())).c_str());
  std::printf("medians of up to %d samples; probs = the stored attention weights (the band's backward needs as much "
              "again as workspace)\n\n",
              samples);
  std::printf("%6s %4s  %-10s %10s %12s %14s %12s %10s\n", "T", "B", "attention", "fwd ms", "fwd+bwd ms",
              "fwd+bwd us/tok", "probs", "vs global");

  for (std::int64_t T : {32, 128, 512, 2048}) {
    const std::int64_t B = std::max<std::int64_t>(1, tokens / T), rows = B * T;
    std::vector<float> qkv = random_floats(static_cast<std::size_t>(rows * 3 * d), 1 + T);  // [B·T, 3d]
    std::vector<float> dout = random_floats(static_cast<std::size_t>(rows * d), 2 + T);     // [B·T, d]
    std::vector<float> out(static_cast<std::size_t>(rows * d));                             // [B·T, d]
    std::vector<float> dqkv(static_cast<std::size_t>(rows * 3 * d));                        // [B·T, 3d]
    std::vector<std::int32_t> lengths(static_cast<std::size_t>(B), static_cast<std::int32_t>(T));
    const std::int64_t stride = 3 * d;
    const HeadsView q{qkv.data(), stride, T * stride}, k{qkv.data() + d, stride, T * stride},
        v{qkv.data() + 2 * d, stride, T * stride}, o{out.data(), d, T * d}, g{dout.data(), d, T * d};
    const HeadsView dq{dqkv.data(), stride, T * stride}, dk{dqkv.data() + d, stride, T * stride},
        dv{dqkv.data() + 2 * d, stride, T * stride};
    auto reset = [&] { std::fill(dqkv.begin(), dqkv.end(), 0.0f); };

    // Global: [B, H, T, T] weights. Fewer samples when one takes seconds.
    const AttentionDims ad{B, H, dh, T, T};
    std::vector<float> probs_global(static_cast<std::size_t>(B * H * T * T));
    const Timing global = measure(
        T >= 2048 ? std::min(samples, 3) : samples,
        [&] {
          attention_forward(ad, q, k, v, o, probs_global.data(), lengths.data(), lengths.data(), false, {},
                            kernels::ComputeType::fp32);
        },
        [&] {
          attention_backward(ad, q, k, v, probs_global.data(), g, dq, dk, dv, lengths.data(), lengths.data(), false, {},
                             kernels::ComputeType::fp32);
        },
        reset);
    const double global_bytes = 4.0 * static_cast<double>(probs_global.size());
    std::printf("%6ld %4ld  %-10s %10.3f %12.3f %14.3f %12s %10s\n", static_cast<long>(T), static_cast<long>(B),
                "global", global.forward_ms, global.total_ms, 1000.0 * global.total_ms / static_cast<double>(rows),
                human_bytes(global_bytes).c_str(), "1.00x");
    probs_global = {};

    for (std::int64_t head_window : {1, 3}) {
      const BandDims dims{B, H, dh, T, (window - 1) / 2, (window - 1) / 2, head_window};
      std::vector<float> probs(static_cast<std::size_t>(dims.probs_size()));
      std::vector<float> scratch(static_cast<std::size_t>(dims.probs_size()));
      const Timing band = measure(
          samples, [&] { band_attention_forward(dims, q, k, v, o, probs.data(), lengths.data()); },
          [&] { band_attention_backward(dims, q, k, v, probs.data(), g, dq, dk, dv, lengths.data(), scratch.data()); },
          reset);
      const std::string name = head_window > 1 ? "band 11x3" : "band 11";
      char speedup[32];
      std::snprintf(speedup, sizeof speedup, "%.2fx", global.total_ms / band.total_ms);
      std::printf("%6ld %4ld  %-10s %10.3f %12.3f %14.3f %12s %10s\n", static_cast<long>(T), static_cast<long>(B),
                  name.c_str(), band.forward_ms, band.total_ms, 1000.0 * band.total_ms / static_cast<double>(rows),
                  human_bytes(4.0 * static_cast<double>(probs.size())).c_str(), speedup);
    }
  }
  std::printf("\n'vs global': global fwd+bwd time / this row's (above 1 = faster than global).\n");
  return 0;
}
