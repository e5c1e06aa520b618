#include "attn/nn/mechanisms/muse/dynamic_conv.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attn/core/error.h"
#include "attn/kernels/dropout.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/products.h"
#include "attn/kernels/rows.h"
#include "attn/kernels/softmax.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

using kernels::Trans;

void dynamic_conv_forward(const ConvDims& dims, const float* taps, const float* v, std::int64_t ldv,
                          const std::int32_t* lengths, float scale, float* out, std::int64_t ldo) {
  const std::int64_t B = dims.batch, T = dims.t, H = dims.heads, dh = dims.head_dim(), K = dims.kernel;
  const std::int64_t P = dims.offset();
#pragma omp parallel
  {
    static thread_local std::vector<float> acc;  // C[b,t,h·dh …] of one row, before scaling; kept per thread
    acc.assign(static_cast<std::size_t>(dh), 0.0f);
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
        for (std::int64_t t = 0; t < len; ++t) {
          const float* w = taps + ((b * T + t) * H + h) * K;  // [k]
          // Taps whose source s = t+κ−P lies inside [0, len); the others read zeros.
          const std::int64_t lo = std::max<std::int64_t>(0, P - t), hi = std::min<std::int64_t>(K, len - t + P);
          std::fill(acc.begin(), acc.end(), 0.0f);
          if (hi > lo)  // acc += Σ_κ w[κ] · v[s = t+κ−P], the rows [dh] of V at ldv apart
            kernels::accumulate_rows(w + lo, v + (b * T + t + lo - P) * ldv + h * dh, ldv, hi - lo, dh, acc.data());
          float* o = out + (b * T + t) * ldo + h * dh;  // [dh]
          for (std::int64_t c = 0; c < dh; ++c) o[c] += scale * acc[c];
        }
      }
    }
  }
}

double dynamic_conv_backward(const ConvDims& dims, const float* taps, const float* v, std::int64_t ldv,
                             const std::int32_t* lengths, const float* dout, std::int64_t lddo, float scale,
                             float* dtaps, float* dv, std::int64_t lddv) {
  const std::int64_t B = dims.batch, T = dims.t, H = dims.heads, dh = dims.head_dim(), K = dims.kernel;
  const std::int64_t P = dims.offset();
  // ⟨g, C⟩ per (b, h): the calling thread's buffer, kept from call to call; the threads below
  // write into it through this reference (a thread_local named in the loop would be each thread's own).
  static thread_local std::vector<double> partials;
  std::vector<double>& partial = partials;
  partial.assign(static_cast<std::size_t>(B * H), 0.0);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, T);
      double gate_sum = 0.0;
      for (std::int64_t t = 0; t < T; ++t) {
        float* dw = dtaps + ((b * T + t) * H + h) * K;  // [k]
        if (t >= len) {
          std::fill(dw, dw + K, 0.0f);
          continue;
        }
        const float* w = taps + ((b * T + t) * H + h) * K;    // [k]
        const float* g = dout + (b * T + t) * lddo + h * dh;  // [dh]
        // Taps whose source s = t+κ−P lies inside [0, len) get ⟨g, v_s⟩; the others 0.
        const std::int64_t lo = std::max<std::int64_t>(0, P - t), hi = std::min<std::int64_t>(K, len - t + P);
        std::fill(dw, dw + K, 0.0f);
        if (hi > lo) kernels::strided_dots(g, v + (b * T + t + lo - P) * ldv + h * dh, ldv, hi - lo, dh, 1.0f, dw + lo);
        for (std::int64_t kk = lo; kk < hi; ++kk) {
          const std::int64_t s = t + kk - P;
          const float dot = dw[kk];
          gate_sum += static_cast<double>(w[kk]) * dot;
          // Data path: position s fed row t through tap κ.
          const float a = scale * w[kk];
          float* dvs = dv + (b * T + s) * lddv + h * dh;  // [dh]
          for (std::int64_t c = 0; c < dh; ++c) dvs[c] += a * g[c];
        }
      }
      partial[static_cast<std::size_t>(b * H + h)] = gate_sum;
    }
  }
  double total = 0.0;
  for (double p : partial) total += p;  // fixed order: the same for any thread count
  return total;
}

void DynamicConvCell::declare(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads,
                              std::int64_t kernel_size, bool is_causal, TapSource tap_source) {
  require(kernel_size >= 1,
          "--muse-kernels: kernel size " + std::to_string(kernel_size) + " is not positive; give sizes ≥ 1, e.g. 3,15");
  require_heads_divide(dim, num_heads);
  d = dim;
  heads = num_heads;
  kernel = kernel_size;
  causal = is_causal;
  source = tap_source;
  if (source == TapSource::fixed) {
    const double fans = static_cast<double>(kernel + heads * kernel);
    weight = params.add(name + ".weight", {heads, kernel}, Init::uniform, static_cast<float>(std::sqrt(6.0 / fans)));
    return;
  }
  weight = params.add(name + ".weight", {heads * kernel, d}, Init::xavier_uniform);
  matrix = params.add_weight_matrix({weight, heads * kernel, d, d});
}

void DynamicConvCell::fixed_taps(const ParamStore& params, float* kernel_w, float* taps, std::int64_t rows) const {
  const std::int64_t hk = heads * kernel;
  kernels::softmax_forward(params.value(weight), kernel_w, heads, kernel, nullptr, 1.0f);
  for (std::int64_t r = 0; r < rows; ++r) std::memcpy(taps + r * hk, kernel_w, sizeof(float) * hk);
}

DynamicConvCell::Saved DynamicConvCell::forward(StepContext& ctx, const float* v, std::int64_t ldv, std::int64_t batch,
                                                std::int64_t t, const std::int32_t* lengths, float tap_dropout,
                                                float scale, float* out, std::int64_t ldo) const {
  const std::int64_t rows = batch * t, hk = heads * kernel, n = rows * hk;
  Saved s;
  s.taps = ctx.arena.alloc(n);  // [B·T, H, k]
  if (source == TapSource::fixed) {
    // softmax(W) once, the same taps on every real row.
    s.kernel = ctx.arena.alloc(hk);  // [H, k]
    fixed_taps(ctx.params, s.kernel, s.taps, rows);
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, t);
      std::fill(s.taps + (b * t + len) * hk, s.taps + (b + 1) * t * hk, 0.0f);  // pad rows have no taps
    }
  } else {
    // Filters z = V · Wfᵀ, then the softmax over the k taps of each (row, head), in place.
    kernels::weight_product(ctx.params.form(matrix), rows, v, ldv, 0.0f, s.taps, hk);
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t len = std::clamp<std::int64_t>(lengths[b], 0, t);
      float* zb = s.taps + b * t * hk;  // [T, H, k]
      kernels::softmax_forward(zb, zb, len * heads, kernel, nullptr, 1.0f);
      std::fill(zb + len * hk, zb + t * hk, 0.0f);  // pad rows have no taps
    }
  }
  s.dropped = s.taps;
  if (ctx.training && tap_dropout > 0.0f) {
    s.p = tap_dropout;
    s.dropped = ctx.arena.alloc(n);
    s.keep = reinterpret_cast<std::uint8_t*>(ctx.arena.alloc((n + 3) / 4));  // a byte per tap
    const std::uint64_t counter = ctx.rng.reserve_blocks(static_cast<std::uint64_t>((n + 3) / 4));
    kernels::dropout_forward(s.taps, s.dropped, s.keep, n, tap_dropout, ctx.rng.seed(), counter);
  }
  dynamic_conv_forward(dims(batch, t), s.dropped, v, ldv, lengths, scale, out, ldo);
  return s;
}

double DynamicConvCell::backward(StepContext& ctx, const Saved& s, const float* v, std::int64_t ldv, std::int64_t batch,
                                 std::int64_t t, const std::int32_t* lengths, const float* dout, std::int64_t lddo,
                                 float scale, float* dv, std::int64_t lddv) const {
  const std::int64_t rows = batch * t, hk = heads * kernel, n = rows * hk;
  const Arena::Mark mark = ctx.arena.mark();
  // ∂⟨dout, C⟩/∂ŵ, and the data path into dv.
  float* dtaps = ctx.arena.alloc(n);  // [B·T, H, k]
  const double gate_grad =
      dynamic_conv_backward(dims(batch, t), s.dropped, v, ldv, lengths, dout, lddo, scale, dtaps, dv, lddv);
  // dŵ = scale · dtaps; dw = dŵ ⊙ keep / (1 − p); dz = softmax backward (0 on pad rows, whose taps are 0).
  kernels::scale(dtaps, scale, n);
  float* dz = dtaps;  // [B·T, H, k]
  if (s.keep) {
    dz = ctx.arena.alloc_zeroed(n);
    kernels::dropout_backward(dtaps, s.keep, dz, n, s.p);
  }
  if (source == TapSource::fixed) {
    // Every row's taps are softmax(W): dW += softmax backward of Σ_rows dŵ (pad rows add 0).
    static thread_local std::vector<double> sums;  // kept from call to call: a step allocates nothing
    sums.assign(static_cast<std::size_t>(hk), 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < hk; ++j) sums[static_cast<std::size_t>(j)] += dz[r * hk + j];
    float* dkernel = ctx.arena.alloc(hk);  // [H, k]
    for (std::int64_t j = 0; j < hk; ++j) dkernel[j] = static_cast<float>(sums[static_cast<std::size_t>(j)]);
    kernels::softmax_backward(s.kernel, dkernel, dkernel, heads, kernel, nullptr, 1.0f);
    float* dw = ctx.params.grad(weight);  // [H, k]
    for (std::int64_t j = 0; j < hk; ++j) dw[j] += dkernel[j];
    ctx.arena.release(mark);
    return gate_grad;
  }
  kernels::softmax_backward(s.taps, dz, dz, rows * heads, kernel, nullptr, 1.0f);
  // Filter generator: dWf += dzᵀ · V; dV += dz · Wf.
  kernels::gemm(ctx.params.activation_compute_type(), Trans::T, Trans::N, hk, d, rows, 1.0f, dz, hk, v, ldv, 1.0f,
                ctx.params.grad(weight), d);
  kernels::weight_product_backward(ctx.params.form(matrix), rows, dz, hk, 1.0f, dv, lddv);
  ctx.arena.release(mark);
  return gate_grad;
}

void DynamicConvCell::step(StepContext& ctx, const float* v_now, std::int64_t ld_now, const float* v_cache,
                           std::int64_t ld_cache, std::int64_t t_max, std::int64_t n, std::int64_t t, float scale,
                           float* out, std::int64_t ldo) const {
  const std::int64_t hk = heads * kernel, dh = d / heads, P = kernel - 1;
  float* taps = ctx.arena.alloc(n * hk);  // [n, H, k]
  if (source == TapSource::fixed) {
    fixed_taps(ctx.params, ctx.arena.alloc(hk), taps, n);
  } else {
    kernels::weight_product(ctx.params.form(matrix), n, v_now, ld_now, 0.0f, taps, hk);
    kernels::softmax_forward(taps, taps, n * heads, kernel, nullptr, 1.0f);
  }
  // The same loop as dynamic_conv_forward for row t, reading the cached v.
  std::vector<float> acc(static_cast<std::size_t>(dh));
  const std::int64_t lo = std::max<std::int64_t>(0, P - t);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* w = taps + (i * heads + h) * kernel;  // [k]
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::int64_t kk = lo; kk < kernel; ++kk) {
        const float a = w[kk];
        const float* vs = v_cache + (i * t_max + t + kk - P) * ld_cache + h * dh;  // [dh]
        for (std::int64_t c = 0; c < dh; ++c) acc[c] += a * vs[c];
      }
      float* o = out + i * ldo + h * dh;  // [dh]
      for (std::int64_t c = 0; c < dh; ++c) o[c] += scale * acc[c];
    }
  }
}

void MultiScaleConv::declare(ParamStore& params, const std::string& name, std::int64_t dim, std::int64_t num_heads,
                             const std::vector<std::int64_t>& kernels, bool is_causal, float tap_dropout_p) {
  require(tap_dropout_p >= 0.0f && tap_dropout_p < 1.0f,
          "--muse-tap-dropout " + std::to_string(tap_dropout_p) + " is outside [0, 1); give e.g. 0.1");
  tap_dropout = tap_dropout_p;
  cells.resize(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i)
    cells[i].declare(params, name + ".conv." + std::to_string(i), dim, num_heads, kernels[i], is_causal);
  if (!cells.empty())
    gate = params.add(name + ".gate", {static_cast<std::int64_t>(cells.size())}, Init::zeros, 0.0f, false);
}

std::vector<float> MultiScaleConv::gate_weights(const ParamStore& params) const {
  std::vector<float> pi;
  gate_weights(params, pi);
  return pi;
}

void MultiScaleConv::gate_weights(const ParamStore& params, std::vector<float>& pi) const {
  const std::size_t n = cells.size();
  pi.assign(n, 0.0f);
  if (n == 0) return;
  const float* alpha = params.value(gate);
  const float top = *std::max_element(alpha, alpha + n);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += std::exp(static_cast<double>(alpha[i]) - top);
  for (std::size_t i = 0; i < n; ++i) pi[i] = static_cast<float>(std::exp(static_cast<double>(alpha[i]) - top) / total);
}

void MultiScaleConv::forward(StepContext& ctx, const float* v, std::int64_t ldv, std::int64_t batch, std::int64_t t,
                             const std::int32_t* lengths, float* out, std::int64_t ldo, Saved& s) const {
  gate_weights(ctx.params, s.pi);
  const std::int64_t d = cells.empty() ? 0 : cells[0].d;
  for (std::int64_t r = 0; r < batch * t; ++r) std::fill(out + r * ldo, out + r * ldo + d, 0.0f);
  s.cells.resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i)
    s.cells[i] = cells[i].forward(ctx, v, ldv, batch, t, lengths, tap_dropout, s.pi[i], out, ldo);
}

void MultiScaleConv::backward(StepContext& ctx, const Saved& s, const float* v, std::int64_t ldv, std::int64_t batch,
                              std::int64_t t, const std::int32_t* lengths, const float* dout, std::int64_t lddo,
                              float* dv, std::int64_t lddv) const {
  const std::size_t n = cells.size();
  if (n == 0) return;
  // Cell i gets dC_i = π_i · dCmix; g_i = ⟨dCmix, C_i⟩ feeds the gate.
  static thread_local std::vector<double> g;  // kept from call to call: a step allocates nothing
  g.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    g[i] = cells[i].backward(ctx, s.cells[i], v, ldv, batch, t, lengths, dout, lddo, s.pi[i], dv, lddv);
  double mean = 0.0;  // Σ_j π_j g_j
  for (std::size_t i = 0; i < n; ++i) mean += s.pi[i] * g[i];
  float* dalpha = ctx.params.grad(gate);  // [n]
  for (std::size_t i = 0; i < n; ++i) dalpha[i] += static_cast<float>(s.pi[i] * (g[i] - mean));
}

void MultiScaleConv::step(StepContext& ctx, const float* v_now, std::int64_t ld_now, const float* v_cache,
                          std::int64_t ld_cache, std::int64_t t_max, std::int64_t n, std::int64_t t, float* out,
                          std::int64_t ldo) const {
  if (cells.empty()) return;
  const std::vector<float> pi = gate_weights(ctx.params);
  const std::int64_t d = cells[0].d;
  for (std::int64_t i = 0; i < n; ++i) std::fill(out + i * ldo, out + i * ldo + d, 0.0f);
  for (std::size_t i = 0; i < cells.size(); ++i)
    cells[i].step(ctx, v_now, ld_now, v_cache, ld_cache, t_max, n, t, pi[i], out, ldo);
}

}  // namespace attn::nn
