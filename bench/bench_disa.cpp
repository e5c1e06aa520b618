// Fast-DiSA's factorised form against multi-head attention and against the
// direct form that builds the T×T×d_h tensor of feature-wise weights (what
// DiSA does), one self-attention layer each, forward + backward.
//
//   bench_disa [--reps N] [--threads N] [--no-direct]
//
// d 256, 4 heads, T = 16, 64, 256 with B = 4096 / T (full-length sequences).
// Time: median of N forward+backward passes, the layers taking turns (the
// direct form: one pass at T = 256, it is slow). Memory: floats the layer takes from the step arena — "fwd"
// is what its forward keeps for backward (arena use after the forward),
// "peak" the arena's high-water mark over forward and backward. The paper's
// claim (docs/mechanisms-spec.md §3.6): Fast-DiSA costs about what MHA costs and about an order of
// magnitude less memory than the direct form. The direct form here computes
// the same function from the same parameters; the largest difference of its
// output and input gradient from the factorised form's is printed as a check.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bench_util.h"
#include "attn/core/arena.h"
#include "attn/core/cpu.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"
#include "attn/nn/linear.h"
#include "attn/nn/mechanisms/mha/mha_mixer.h"

namespace {

using namespace attn;
using namespace attn::nn;
using kernels::Trans;
using Clock = std::chrono::steady_clock;

using bench::median;
using bench::random_floats;

float sigmoid(float z) { return z >= 0 ? 1.0f / (1.0f + std::exp(-z)) : std::exp(z) / (1.0f + std::exp(z)); }

// ---------------------------------------------------------------------------
// The direct form of the same layer (encoder masks, exp token2token, gate on):
// P_ijk = softmax_j(R_ij + S_jk) materialised as [B, H, T, T, d_h], naive loops
// for the feature-wise softmax, GEMMs for the projections. Reads the
// parameters a FastDisaMixer declared under `name`.
struct DirectDisa {
  std::int64_t d = 0, heads = 0, dh = 0;
  Linear qkv, out;
  ParamId w1 = -1, b1 = -1, w2 = -1, b2 = -1, wg = -1, bg = -1;

  DirectDisa(const ParamStore& p, const std::string& name, std::int64_t dim, std::int64_t num_heads)
      : d(dim), heads(num_heads), dh(dim / num_heads) {
    qkv = {p.find(name + ".q.weight"), p.find(name + ".q.bias"), d, 3 * d};
    out = {p.find(name + ".o.weight"), p.find(name + ".o.bias"), d, d};
    w1 = p.find(name + ".s1.weight");
    b1 = p.find(name + ".s1.bias");
    w2 = p.find(name + ".s2.weight");
    b2 = p.find(name + ".s2.bias");
    wg = p.find(name + ".gate.weight");
    bg = p.find(name + ".gate.bias");
  }

  struct Saved {
    const float* x = nullptr;
    float* qkv = nullptr;     // [B·T, 3d]
    float* hidden = nullptr;  // [B·T, d]
    float* p = nullptr;       // [B, H, T, T, dh]: the T×T×d_h weights
    float* o = nullptr;       // [B·T, d]
    float* g = nullptr;       // [B·T, d]
    float* u = nullptr;       // [B·T, d]
    std::int64_t batch = 0, t = 0;
  };

  bool allowed(std::int64_t h, std::int64_t i, std::int64_t j) const { return h < heads / 2 ? j < i : j > i; }

  Saved forward(StepContext& ctx, const float* x, float* y, std::int64_t B, std::int64_t T) const {
    const ParamStore& params = ctx.params;
    const std::int64_t rows = B * T, qs = 3 * d;
    Saved s;
    s.x = x;
    s.batch = B;
    s.t = T;
    s.qkv = ctx.arena.alloc(rows * qs);
    qkv.forward(params, x, s.qkv, rows);
    s.hidden = ctx.arena.alloc(rows * d);
    float* S = ctx.arena.alloc(rows * d);  // [B·T, d], only needed inside the forward
    const float* v = s.qkv + 2 * d;
    for (std::int64_t h = 0; h < heads; ++h)
      kernels::sgemm_fp32(Trans::N, Trans::T, rows, dh, dh, 1.0f, v + h * dh, qs, params.value(w1) + h * dh * dh, dh,
                          0.0f, s.hidden + h * dh, d);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < d; ++c) {
        const float z = s.hidden[r * d + c] + params.value(b1)[c];
        s.hidden[r * d + c] = z > 0 ? z : std::expm1(z);
      }
    for (std::int64_t h = 0; h < heads; ++h)
      kernels::sgemm_fp32(Trans::N, Trans::T, rows, dh, dh, 1.0f, s.hidden + h * dh, d, params.value(w2) + h * dh * dh,
                          dh, 0.0f, S + h * dh, d);
    kernels::add_row_vector(S, params.value(b2), rows, d);
    s.p = ctx.arena.alloc(B * heads * T * T * dh);
    s.o = ctx.arena.alloc(rows * d);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
#pragma omp parallel
    {
      std::vector<float> R(static_cast<std::size_t>(T * T)), m(dh), den(dh), acc(dh);
#pragma omp for collapse(2) schedule(dynamic, 1)
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < heads; ++h) {
          const float* q = s.qkv + b * T * qs + h * dh;
          const float* vb = q + 2 * d;
          const float* Sb = S + b * T * d + h * dh;
          kernels::sgemm_fp32(Trans::N, Trans::T, T, T, dh, scale, q, qs, q + d, qs, 0.0f, R.data(), T);
          float* P = s.p + (b * heads + h) * T * T * dh;
          for (std::int64_t i = 0; i < T; ++i) {
            float* Pi = P + i * T * dh;  // [T, dh]
            std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
            for (std::int64_t j = 0; j < T; ++j)
              if (allowed(h, i, j))
                for (std::int64_t c = 0; c < dh; ++c) m[c] = std::max(m[c], R[i * T + j] + Sb[j * d + c]);
            std::fill(den.begin(), den.end(), 0.0f);
            for (std::int64_t j = 0; j < T; ++j) {
              float* pij = Pi + j * dh;
              if (!allowed(h, i, j)) {
                std::fill(pij, pij + dh, 0.0f);
                continue;
              }
              for (std::int64_t c = 0; c < dh; ++c) {
                pij[c] = std::exp(R[i * T + j] + Sb[j * d + c] - m[c]);
                den[c] += pij[c];
              }
            }
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (std::int64_t j = 0; j < T; ++j) {
              float* pij = Pi + j * dh;
              for (std::int64_t c = 0; c < dh; ++c) {
                pij[c] = den[c] > 0 ? pij[c] / den[c] : 0.0f;
                acc[c] += pij[c] * vb[j * qs + c];
              }
            }
            std::copy(acc.begin(), acc.end(), s.o + (b * T + i) * d + h * dh);
          }
        }
    }
    s.g = ctx.arena.alloc(rows * d);
    s.u = ctx.arena.alloc(rows * d);
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* wh = params.value(wg) + h * dh * 2 * dh;
      kernels::sgemm_fp32(Trans::N, Trans::T, rows, dh, dh, 1.0f, v + h * dh, qs, wh, 2 * dh, 0.0f, s.g + h * dh, d);
      kernels::sgemm_fp32(Trans::N, Trans::T, rows, dh, dh, 1.0f, s.o + h * dh, d, wh + dh, 2 * dh, 1.0f, s.g + h * dh,
                          d);
    }
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < d; ++c) {
        const float g = sigmoid(s.g[r * d + c] + params.value(bg)[c]);
        s.g[r * d + c] = g;
        s.u[r * d + c] = g * v[r * qs + c] + (1 - g) * s.o[r * d + c];
      }
    out.forward(params, s.u, y, rows);
    return s;
  }

  void backward(StepContext& ctx, const Saved& s, const float* dy, float* dx) const {
    ParamStore& params = ctx.params;
    const std::int64_t B = s.batch, T = s.t, rows = B * T, qs = 3 * d;
    const float* v = s.qkv + 2 * d;
    float* du = ctx.arena.alloc_zeroed(rows * d);
    out.backward(params, s.u, dy, du, rows);
    float* dqkv = ctx.arena.alloc_zeroed(rows * qs);
    float* dv = dqkv + 2 * d;
    float* dz = ctx.arena.alloc(rows * d);
    float* dout = ctx.arena.alloc(rows * d);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < d; ++c) {
        const float g = s.g[r * d + c], gu = du[r * d + c];
        dz[r * d + c] = gu * (v[r * qs + c] - s.o[r * d + c]) * g * (1 - g);
        dv[r * qs + c] += gu * g;
        dout[r * d + c] = gu * (1 - g);
      }
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* wh = params.value(wg) + h * dh * 2 * dh;
      float* gh = params.grad(wg) + h * dh * 2 * dh;
      kernels::sgemm_fp32(Trans::N, Trans::N, rows, dh, dh, 1.0f, dz + h * dh, d, wh, 2 * dh, 1.0f, dv + h * dh, qs);
      kernels::sgemm_fp32(Trans::N, Trans::N, rows, dh, dh, 1.0f, dz + h * dh, d, wh + dh, 2 * dh, 1.0f, dout + h * dh,
                          d);
      kernels::sgemm_fp32(Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + h * dh, d, v + h * dh, qs, 1.0f, gh, 2 * dh);
      kernels::sgemm_fp32(Trans::T, Trans::N, dh, dh, rows, 1.0f, dz + h * dh, d, s.o + h * dh, d, 1.0f, gh + dh,
                          2 * dh);
    }
    kernels::sum_rows(dz, params.grad(bg), rows, d);
    float* dS = ctx.arena.alloc_zeroed(rows * d);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    // df_ijk = P_ijk dO_ik (v_jk − O_ik); dR_ij = Σ_k df_ijk; dS_jk = Σ_i df_ijk; dv_jk += Σ_i P_ijk dO_ik.
    // Heads of one sequence share no rows of dS/dv columns, so (b, h) blocks are independent.
#pragma omp parallel
    {
      std::vector<float> dR(static_cast<std::size_t>(T * T));
#pragma omp for collapse(2) schedule(dynamic, 1)
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::int64_t col = h * dh;
          const float* P = s.p + (b * heads + h) * T * T * dh;
          const float* q = s.qkv + b * T * qs + col;
          const float* vb = q + 2 * d;
          float* dq = dqkv + b * T * qs + col;
          float* dvb = dq + 2 * d;
          float* dSb = dS + b * T * d + col;
          for (std::int64_t i = 0; i < T; ++i) {
            const float* go = dout + (b * T + i) * d + col;
            const float* oi = s.o + (b * T + i) * d + col;
            for (std::int64_t j = 0; j < T; ++j) {
              const float* pij = P + (i * T + j) * dh;
              float dr = 0.0f;
              for (std::int64_t c = 0; c < dh; ++c) {
                const float df = pij[c] * go[c] * (vb[j * qs + c] - oi[c]);
                dr += df;
                dSb[j * d + c] += df;
                dvb[j * qs + c] += pij[c] * go[c];
              }
              dR[i * T + j] = dr;
            }
          }
          kernels::sgemm_fp32(Trans::N, Trans::N, T, dh, T, scale, dR.data(), T, q + d, qs, 1.0f, dq, qs);
          kernels::sgemm_fp32(Trans::T, Trans::N, T, dh, T, scale, dR.data(), T, q, qs, 1.0f, dq + d, qs);
        }
    }
    float* dhidden = ctx.arena.alloc(rows * d);
    for (std::int64_t h = 0; h < heads; ++h) {
      kernels::sgemm_fp32(Trans::T, Trans::N, dh, dh, rows, 1.0f, dS + h * dh, d, s.hidden + h * dh, d, 1.0f,
                          params.grad(w2) + h * dh * dh, dh);
      kernels::sgemm_fp32(Trans::N, Trans::N, rows, dh, dh, 1.0f, dS + h * dh, d, params.value(w2) + h * dh * dh, dh,
                          0.0f, dhidden + h * dh, d);
    }
    kernels::sum_rows(dS, params.grad(b2), rows, d);
    for (std::int64_t n = 0; n < rows * d; ++n) dhidden[n] *= s.hidden[n] > 0 ? 1.0f : s.hidden[n] + 1.0f;
    for (std::int64_t h = 0; h < heads; ++h) {
      kernels::sgemm_fp32(Trans::T, Trans::N, dh, dh, rows, 1.0f, dhidden + h * dh, d, v + h * dh, qs, 1.0f,
                          params.grad(w1) + h * dh * dh, dh);
      kernels::sgemm_fp32(Trans::N, Trans::N, rows, dh, dh, 1.0f, dhidden + h * dh, d, params.value(w1) + h * dh * dh,
                          dh, 1.0f, dv + h * dh, qs);
    }
    kernels::sum_rows(dhidden, params.grad(b1), rows, d);
    qkv.backward(params, s.x, dqkv, dx, rows);
  }
};

// ---------------------------------------------------------------------------

constexpr double kMB = 1.0 / (1024.0 * 1024.0);

// One layer under test: pass(ctx, y, dx) runs one forward and backward on
// ctx.arena and returns the arena floats in use right after the forward.
struct Contender {
  using Pass = std::function<std::size_t(StepContext&, float*, float*)>;
  ParamStore& params;
  Pass pass;
  int reps = 0;
  Arena arena;  // its own, so its high-water mark is this layer's alone
  Rng rng{3};
  StepContext ctx{params, arena, rng, true};
  std::vector<double> times;
  double fwd_mb = 0;
  std::vector<float> y, dx;  // from the last pass

  Contender(ParamStore& p, Pass f, int n, std::int64_t floats)
      : params(p), pass(std::move(f)), reps(n), y(static_cast<std::size_t>(floats)), dx(y.size()) {}
  void run_once(bool timed) {
    arena.reset();
    params.zero_grads();
    std::fill(dx.begin(), dx.end(), 0.0f);
    const auto t0 = Clock::now();
    const std::size_t fwd = pass(ctx, y.data(), dx.data());
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (timed)
      times.push_back(ms);
    else
      fwd_mb = static_cast<double>(fwd) * sizeof(float) * kMB;
  }
  double ms() const { return times.empty() ? 0.0 : median(times); }
  double peak_mb() const { return static_cast<double>(arena.high_water_floats()) * sizeof(float) * kMB; }
};

// Pass 0 of each warms up caches, threads and the arena; then the contenders
// take turns (A B C A B C …), so a drift in the shared machine's load hits all alike.
void measure(std::vector<Contender*> contenders) {
  int most = 0;
  for (Contender* c : contenders) {
    c->run_once(false);
    most = std::max(most, c->reps);
  }
  for (int r = 0; r < most; ++r)
    for (Contender* c : contenders)
      if (r < c->reps) c->run_once(true);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
  return worst;
}

int run(int argc, char** argv) {
  int reps = 5, threads = 0;
  bool direct = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (arg == "--no-direct")
      direct = false;
    else {
      std::fprintf(stderr, "usage: bench_disa [--reps N] [--threads N] [--no-direct]\n");
      return 2;
    }
  }
  set_threads(threads);
  const std::int64_t d = 256, H = 4, tokens = 4096;
  std::printf("One self-attention layer, forward + backward: d %ld, %ld heads, B·T = %ld tokens, full lengths\n",
              static_cast<long>(d), static_cast<long>(H), static_cast<long>(tokens));
  std::printf("ISA %s, %d threads; median of %d passes (direct form: 1 pass at T ≥ 256)\n",
              std::string(isa_name(active_isa())).c_str(), num_threads(), reps);
  std::printf("fwd MB = arena held after the forward (what backward needs); peak MB = arena high-water over both\n\n");
  std::printf("%4s %4s | %8s %8s %8s | %8s %8s %8s | %8s %8s %8s | %9s %11s | %9s\n", "T", "B", "MHA ms", "DiSA ms",
              "direct", "MHA fwd", "DiSA fwd", "direct", "MHA peak", "DiSA pk", "direct", "DiSA/MHA", "direct/DiSA",
              "max|Δ|");
  std::printf("%4s %4s | %8s %8s %8s | %8s %8s %8s | %8s %8s %8s | %9s %11s | %9s\n", "", "", "", "", "ms", "MB", "MB",
              "fwd MB", "MB", "MB", "peak MB", "time", "fwd mem", "y, dx");
  for (const std::int64_t T : {16, 64, 256}) {
    const std::int64_t B = tokens / T, rows = B * T;
    const std::vector<std::int32_t> lengths(static_cast<std::size_t>(B), static_cast<std::int32_t>(T));
    const std::vector<float> x = random_floats(static_cast<std::size_t>(rows * d), 1);
    const std::vector<float> dy = random_floats(static_cast<std::size_t>(rows * d), 2);

    MixerSpec mha_spec;
    mha_spec.mechanism = "mha";
    mha_spec.d = d;
    mha_spec.heads = H;
    ParamStore mha_params;
    MhaMixer mha(mha_params, "mha", mha_spec);
    mha_params.allocate();
    Rng init_mha(7);
    mha_params.initialize(init_mha);

    MixerSpec disa_spec = mha_spec;
    disa_spec.mechanism = "fastdisa";
    ParamStore disa_params;
    FastDisaMixer disa(disa_params, "disa", disa_spec);
    disa_params.allocate();
    Rng init_disa(7);
    disa_params.initialize(init_disa);

    auto mixer_pass = [&](const TokenMixer& mixer) {
      return [&](StepContext& ctx, float* y, float* dx) {
        auto saved = mixer.forward(ctx, x.data(), y, B, T, lengths.data());
        const std::size_t fwd = ctx.arena.used_floats();
        mixer.backward(ctx, *saved, dy.data(), dx);
        return fwd;
      };
    };
    Contender c_mha(mha_params, mixer_pass(mha), reps, rows * d);
    Contender c_disa(disa_params, mixer_pass(disa), reps, rows * d);
    const DirectDisa layer(disa_params, "disa", d, H);
    Contender c_direct(
        disa_params,
        [&](StepContext& ctx, float* y, float* dx) {
          const DirectDisa::Saved saved = layer.forward(ctx, x.data(), y, B, T);
          const std::size_t fwd = ctx.arena.used_floats();
          layer.backward(ctx, saved, dy.data(), dx);
          return fwd;
        },
        T >= 256 ? 1 : reps, rows * d);
    std::vector<Contender*> contenders{&c_mha, &c_disa};
    if (direct) contenders.push_back(&c_direct);
    measure(contenders);
    const double diff = direct ? std::max(max_abs_diff(c_direct.y, c_disa.y), max_abs_diff(c_direct.dx, c_disa.dx))
                               : 0.0;
    std::printf("%4ld %4ld | %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f | %9.2f %11.1f | %9.1e\n",
                static_cast<long>(T), static_cast<long>(B), c_mha.ms(), c_disa.ms(), c_direct.ms(), c_mha.fwd_mb,
                c_disa.fwd_mb, c_direct.fwd_mb, c_mha.peak_mb(), c_disa.peak_mb(), c_direct.peak_mb(),
                c_disa.ms() / c_mha.ms(), direct ? c_direct.fwd_mb / c_disa.fwd_mb : 0.0, diff);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_disa: %s\n", e.what());
    return 1;
  }
}
