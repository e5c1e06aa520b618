// Convolutional Self-Attention: the band kernel against a dense masked-softmax
// reference in double, the mixer's gradients against finite differences,
// causality and incremental decoding, edge cases (docs/mechanisms-spec.md §4.1, §4.2, §5).
#include "grad_check.h"
#include "mixer_checks.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "attn/core/arena.h"
#include "attn/core/error.h"
#include "attn/nn/attention.h"
#include "attn/nn/mechanisms/csan/band_attention.h"
#include "attn/nn/mechanisms/csan/csan_mixer.h"
#include "attn/nn/mechanisms/mha/mha_mixer.h"

using namespace attn;
using namespace attn::nn;
using attn::test::check_all_parameters;
using attn::test::check_gradient;
using attn::test::weighted_sum;

namespace {

// q, k, v side by side in one [B, T, 3d] buffer, as the mixer's fused projection lays them out.
struct Qkv {
  std::int64_t B, T, H, dh, d;
  std::vector<float> data;  // [B, T, 3d]
  Qkv(std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t head_dim, std::uint64_t seed)
      : B(b), T(t), H(h), dh(head_dim), d(h * head_dim),
        data(test::random_vector(static_cast<std::size_t>(b * t * 3 * h * head_dim), seed, -1.5f, 1.5f)) {}
  HeadsView view(std::vector<float>& buf, int which) const { return {buf.data() + which * d, 3 * d, T * 3 * d}; }
  float& at(std::vector<float>& buf, int which, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t x) const {
    return buf[static_cast<std::size_t>((b * T + t) * 3 * d + which * d + h * dh + x)];
  }
};

// Dense reference in double: scores over every (key head s, key position j),
// masked by the band, the head area and the lengths; then the textbook softmax
// gradients. probs: [B, H, T, H, T].
struct DenseRef {
  std::vector<double> out, probs, grad;  // out: [B, T, d]; grad: dq | dk | dv in the [B, T, 3d] layout of Qkv
};

DenseRef dense_reference(const Qkv& x, std::vector<float> qkv, const std::vector<float>& dout,
                         const std::vector<std::int32_t>& lengths, std::int64_t left, std::int64_t right,
                         std::int64_t head_window) {
  const std::int64_t B = x.B, T = x.T, H = x.H, dh = x.dh, d = x.d, n = (head_window - 1) / 2;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  DenseRef r;
  r.out.assign(B * T * d, 0.0);
  r.probs.assign(B * H * T * H * T, 0.0);
  auto val = [&](int which, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t e) {
    return static_cast<double>(x.at(qkv, which, b, t, h, e));
  };
  std::vector<double> grad(B * T * 3 * d, 0.0);  // dq, dk, dv in the Qkv layout
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t len = lengths[b];
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < len; ++i) {
        auto allowed = [&](std::int64_t s, std::int64_t j) {
          return std::abs(s - h) <= n && j < len && j >= i - left && j <= i + right;
        };
        double* p = &r.probs[(((b * H + h) * T + i) * H) * T];  // [H, T]
        double mx = -1e300;
        for (std::int64_t s = 0; s < H; ++s)
          for (std::int64_t j = 0; j < T; ++j)
            if (allowed(s, j)) {
              double dot = 0;
              for (std::int64_t e = 0; e < dh; ++e) dot += val(0, b, i, h, e) * val(1, b, j, s, e);
              p[s * T + j] = scale * dot;
              mx = std::max(mx, p[s * T + j]);
            }
        double sum = 0;
        for (std::int64_t s = 0; s < H; ++s)
          for (std::int64_t j = 0; j < T; ++j)
            if (allowed(s, j)) sum += (p[s * T + j] = std::exp(p[s * T + j] - mx));
        for (std::int64_t s = 0; s < H; ++s)
          for (std::int64_t j = 0; j < T; ++j)
            if (allowed(s, j)) {
              p[s * T + j] /= sum;
              for (std::int64_t e = 0; e < dh; ++e)
                r.out[(b * T + i) * d + h * dh + e] += p[s * T + j] * val(2, b, j, s, e);
            }
        // Backward of row (b, h, i).
        auto g = [&](std::int64_t e) { return static_cast<double>(dout[(b * T + i) * d + h * dh + e]); };
        std::vector<double> ga(H * T, 0.0);
        double c = 0;
        for (std::int64_t s = 0; s < H; ++s)
          for (std::int64_t j = 0; j < T; ++j)
            if (allowed(s, j)) {
              for (std::int64_t e = 0; e < dh; ++e) ga[s * T + j] += g(e) * val(2, b, j, s, e);
              c += p[s * T + j] * ga[s * T + j];
            }
        for (std::int64_t s = 0; s < H; ++s)
          for (std::int64_t j = 0; j < T; ++j)
            if (allowed(s, j)) {
              const double a = p[s * T + j], ds = scale * a * (ga[s * T + j] - c);
              for (std::int64_t e = 0; e < dh; ++e) {
                grad[(b * T + i) * 3 * d + h * dh + e] += ds * val(1, b, j, s, e);
                grad[(b * T + j) * 3 * d + d + s * dh + e] += ds * val(0, b, i, h, e);
                grad[(b * T + j) * 3 * d + 2 * d + s * dh + e] += a * g(e);
              }
            }
      }
  }
  r.grad = std::move(grad);
  return r;
}

struct KernelRun {
  std::vector<float> out, probs, grad;  // grad: [B, T, 3d] (dq | dk | dv), accumulated onto `initial`
};

KernelRun run_kernel(const Qkv& x, std::vector<float> qkv, const std::vector<float>& dout,
                     const std::vector<std::int32_t>& lengths, const BandDims& dims,
                     const std::vector<float>& initial_grad) {
  KernelRun r;
  r.out.assign(x.B * x.T * x.d, 123.0f);  // written, not accumulated
  r.probs.assign(dims.probs_size(), 123.0f);
  r.grad = initial_grad;
  const HeadsView out{r.out.data(), x.d, x.T * x.d};
  band_attention_forward(dims, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), out, r.probs.data(), lengths.data());
  std::vector<float> g = dout;
  band_attention_backward(dims, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), r.probs.data(),
                          {g.data(), x.d, x.T * x.d}, x.view(r.grad, 0), x.view(r.grad, 1), x.view(r.grad, 2),
                          lengths.data());
  return r;
}

// Band → the dense [B, H, T, H, T] layout of the reference; invalid band slots must hold exactly 0.
std::vector<double> expand_band(const std::vector<float>& band, const BandDims& dims,
                                const std::vector<std::int32_t>& lengths, bool& invalid_slots_zero) {
  const std::int64_t B = dims.batch, H = dims.heads, T = dims.t, M = dims.width(), N = dims.head_window;
  const std::int64_t n = (N - 1) / 2;
  std::vector<double> dense(B * H * T * H * T, 0.0);
  invalid_slots_zero = true;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t so = 0; so < N; ++so)
          for (std::int64_t o = 0; o < M; ++o) {
            const float p = band[(((b * H + h) * T + i) * N + so) * M + o];
            const std::int64_t s = h + so - n, j = i + o - dims.left;
            const bool valid = i < lengths[b] && s >= 0 && s < H && j >= 0 && j < lengths[b];
            if (valid)
              dense[(((b * H + h) * T + i) * H + s) * T + j] = p;
            else if (p != 0.0f)
              invalid_slots_zero = false;
          }
  return dense;
}

// The authors' boundary heads (wrap_heads) in double, slot by slot: query
// (b, h, i) reads, in head slot o, keys of head (h+o−n) mod H and values of
// head clamp(h+o−n, 0, H−1). out: [B, T, d]; grad: dq | dk | dv in the Qkv layout.
DenseRef wrap_reference(const Qkv& x, std::vector<float> qkv, const std::vector<float>& dout,
                        const std::vector<std::int32_t>& lengths, std::int64_t left, std::int64_t right,
                        std::int64_t N) {
  const std::int64_t B = x.B, T = x.T, H = x.H, dh = x.dh, d = x.d, n = (N - 1) / 2;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  auto val = [&](int which, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t e) {
    return static_cast<double>(x.at(qkv, which, b, t, h, e));
  };
  DenseRef r;
  r.out.assign(B * T * d, 0.0);
  r.grad.assign(B * T * 3 * d, 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < lengths[b]; ++i) {
        std::vector<double> p(N * T, 0.0), ga(N * T, 0.0);
        std::vector<bool> ok(N * T, false);
        double mx = -1e300, sum = 0.0, c = 0.0;
        for (std::int64_t o = 0; o < N; ++o)
          for (std::int64_t j = std::max<std::int64_t>(0, i - left);
               j < std::min<std::int64_t>(lengths[b], i + right + 1); ++j) {
            const std::int64_t kh = ((h + o - n) % H + H) % H;
            double dot = 0;
            for (std::int64_t e = 0; e < dh; ++e) dot += val(0, b, i, h, e) * val(1, b, j, kh, e);
            p[o * T + j] = scale * dot;
            ok[o * T + j] = true;
            mx = std::max(mx, p[o * T + j]);
          }
        for (std::int64_t k = 0; k < N * T; ++k)
          if (ok[k]) sum += (p[k] = std::exp(p[k] - mx));
        for (std::int64_t k = 0; k < N * T; ++k) {
          if (!ok[k]) continue;
          p[k] /= sum;
          const std::int64_t o = k / T, j = k % T, vh = std::clamp<std::int64_t>(h + o - n, 0, H - 1);
          for (std::int64_t e = 0; e < dh; ++e) {
            r.out[(b * T + i) * d + h * dh + e] += p[k] * val(2, b, j, vh, e);
            ga[k] += dout[(b * T + i) * d + h * dh + e] * val(2, b, j, vh, e);
          }
          c += p[k] * ga[k];
        }
        for (std::int64_t k = 0; k < N * T; ++k) {
          if (!ok[k]) continue;
          const std::int64_t o = k / T, j = k % T, kh = ((h + o - n) % H + H) % H,
                             vh = std::clamp<std::int64_t>(h + o - n, 0, H - 1);
          const double ds = scale * p[k] * (ga[k] - c);
          for (std::int64_t e = 0; e < dh; ++e) {
            r.grad[(b * T + i) * 3 * d + h * dh + e] += ds * val(1, b, j, kh, e);
            r.grad[(b * T + j) * 3 * d + d + kh * dh + e] += ds * val(0, b, i, h, e);
            r.grad[(b * T + j) * 3 * d + 2 * d + vh * dh + e] += p[k] * dout[(b * T + i) * d + h * dh + e];
          }
        }
      }
  return r;
}

void require_close_d(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol) {
  std::vector<float> g(got.begin(), got.end());
  test::require_close(g, want, atol, rtol);
}

}  // namespace

TEST_CASE("band attention: outputs, probs and gradients equal a dense masked-softmax reference", "[csan]") {
  const std::int64_t dh = 5;  // odd: exercises the tails of the vectorised loops
  for (std::int64_t window : {1, 7})
    for (std::int64_t T : {3, 7, 12})  // shorter than, equal to and longer than the window 7
      for (std::int64_t H : {1, 2, 3, 8})
        for (std::int64_t N : {1, 3})
          for (bool causal : {false, true}) {
            INFO("window " << window << " T " << T << " H " << H << " head_window " << N << " causal " << causal);
            const std::int64_t half = (window - 1) / 2;
            const BandDims dims{3, H, dh, T, half, causal ? 0 : half, N};
            // A full sequence, one padded inside the window, and a short one.
            const std::vector<std::int32_t> lengths{static_cast<std::int32_t>(T),
                                                    static_cast<std::int32_t>(std::max<std::int64_t>(1, T - 2)),
                                                    static_cast<std::int32_t>((T + 1) / 2)};
            const Qkv x(3, T, H, dh, 100 + T * 10 + H);
            const std::vector<float> dout = test::random_vector(3 * T * x.d, 7 + T + H);
            const std::vector<float> initial = test::random_vector(3 * T * 3 * x.d, 8 + T);
            const KernelRun run = run_kernel(x, x.data, dout, lengths, dims, initial);
            const DenseRef ref = dense_reference(x, x.data, dout, lengths, dims.left, dims.right, N);

            std::vector<double> want_out = ref.out;
            test::require_close(run.out, want_out, 1e-5, 1e-4);
            bool invalid_zero = false;
            const std::vector<double> probs = expand_band(run.probs, dims, lengths, invalid_zero);
            REQUIRE(invalid_zero);
            require_close_d(probs, ref.probs, 1e-6, 1e-4);
            std::vector<double> want_grad(initial.begin(), initial.end());
            for (std::size_t e = 0; e < want_grad.size(); ++e) want_grad[e] += ref.grad[e];
            test::require_close(run.grad, want_grad, 1e-5, 1e-4);
          }
}

TEST_CASE("band attention: bitwise the same result for 1 and 2 threads, 1D and 2D", "[csan]") {
  const int saved = num_threads();
  for (std::int64_t N : {1, 3}) {
    const BandDims dims{3, 8, 16, 20, 5, 5, N};
    const Qkv x(3, 20, 8, 16, 77);
    const std::vector<std::int32_t> lengths{20, 13, 1};
    const std::vector<float> dout = test::random_vector(3 * 20 * x.d, 78), initial(3 * 20 * 3 * x.d, 0.0f);
    set_threads(1);
    const KernelRun one = run_kernel(x, x.data, dout, lengths, dims, initial);
    set_threads(2);
    const KernelRun two = run_kernel(x, x.data, dout, lengths, dims, initial);
    REQUIRE(one.out == two.out);
    REQUIRE(one.probs == two.probs);
    REQUIRE(one.grad == two.grad);
  }
  set_threads(saved);
}

TEST_CASE("band attention, the authors' boundary heads: keys wrap, values clamp, against a slot reference", "[csan]") {
  for (std::int64_t window : {1, 5})
    for (std::int64_t T : {3, 7})
      for (std::int64_t H : {1, 2, 3, 5})
        for (std::int64_t N : {1, 3, 5})
          for (bool causal : {false, true}) {
            INFO("window " << window << " T " << T << " H " << H << " head_window " << N << " causal " << causal);
            const std::int64_t half = (window - 1) / 2, dh = 3;
            BandDims dims{2, H, dh, T, half, causal ? 0 : half, N};
            dims.wrap_heads = true;
            const std::vector<std::int32_t> lengths{static_cast<std::int32_t>(T), static_cast<std::int32_t>(T - 1)};
            const Qkv x(2, T, H, dh, 300 + T * 10 + H);
            const std::vector<float> dout = test::random_vector(2 * T * x.d, 17 + T + H);
            const std::vector<float> initial(2 * T * 3 * x.d, 0.0f);
            const KernelRun run = run_kernel(x, x.data, dout, lengths, dims, initial);
            const DenseRef ref = wrap_reference(x, x.data, dout, lengths, dims.left, dims.right, N);
            test::require_close(run.out, ref.out, 1e-5, 1e-4);
            test::require_close(run.grad, ref.grad, 1e-5, 1e-4);
            if (N > 1 && H > 1) {  // the boundary really differs from dropping heads
              BandDims drop = dims;
              drop.wrap_heads = false;
              REQUIRE(run_kernel(x, x.data, dout, lengths, drop, initial).out != run.out);
            }
          }
  // Bitwise the same for 1 and 2 threads.
  const int saved = num_threads();
  BandDims dims{3, 4, 8, 12, 3, 3, 3};
  dims.wrap_heads = true;
  const Qkv x(3, 12, 4, 8, 79);
  const std::vector<std::int32_t> lengths{12, 7, 1};
  const std::vector<float> dout = test::random_vector(3 * 12 * x.d, 80), initial(3 * 12 * 3 * x.d, 0.0f);
  set_threads(1);
  const KernelRun one = run_kernel(x, x.data, dout, lengths, dims, initial);
  set_threads(2);
  const KernelRun two = run_kernel(x, x.data, dout, lengths, dims, initial);
  set_threads(saved);
  REQUIRE(one.out == two.out);
  REQUIRE(one.grad == two.grad);
}

TEST_CASE("band attention: a window of 2T-1 or more is global attention", "[csan]") {
  const std::int64_t B = 2, T = 9, H = 3, dh = 8;
  const Qkv x(B, T, H, dh, 91);
  const std::vector<std::int32_t> lengths{9, 6};
  const std::vector<float> dout = test::random_vector(B * T * x.d, 92);
  for (std::int64_t half : {T - 1, T + 4}) {
    INFO("left = right = " << half);
    const BandDims dims{B, H, dh, T, half, half, 1};
    const KernelRun band = run_kernel(x, x.data, dout, lengths, dims, std::vector<float>(B * T * 3 * x.d, 0.0f));
    std::vector<float> qkv = x.data, out(B * T * x.d), probs(B * H * T * T), grad(B * T * 3 * x.d, 0.0f);
    std::vector<float> g = dout;
    const AttentionDims ad{B, H, dh, T, T};
    attention_forward(ad, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), {out.data(), x.d, T * x.d}, probs.data(),
                      lengths.data(), lengths.data(), false, {}, kernels::ComputeType::fp32);
    attention_backward(ad, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), probs.data(), {g.data(), x.d, T * x.d},
                       x.view(grad, 0), x.view(grad, 1), x.view(grad, 2), lengths.data(), lengths.data(), false, {},
                       kernels::ComputeType::fp32);
    test::require_close(band.out, std::vector<double>(out.begin(), out.end()), 1e-6, 1e-5);
    test::require_close(band.grad, std::vector<double>(grad.begin(), grad.end()), 1e-6, 1e-5);
    // Band row i, slot o is key j = i + o − left: the same numbers as the T×T row.
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < T; ++i)
          for (std::int64_t j = 0; j < T; ++j) {
            const float got = band.probs[((b * H + h) * T + i) * dims.width() + j - i + half];
            REQUIRE(std::abs(got - probs[((b * H + h) * T + i) * T + j]) <= 1e-6f);
          }
  }
}

TEST_CASE("band attention: T = 1 gives the value itself (1D) or the 3-head area at position 0 (2D)", "[csan]") {
  const std::int64_t H = 4, dh = 6;
  const Qkv x(1, 1, H, dh, 55);
  const std::vector<std::int32_t> len{1};
  std::vector<float> qkv = x.data, out(x.d);
  std::vector<float> probs1(H * 11), probs3(H * 3 * 11);
  band_attention_forward({1, H, dh, 1, 5, 5, 1}, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), {out.data(), x.d, x.d},
                         probs1.data(), len.data());
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t e = 0; e < dh; ++e) REQUIRE(out[h * dh + e] == x.at(qkv, 2, 0, 0, h, e));
  band_attention_forward({1, H, dh, 1, 5, 5, 3}, x.view(qkv, 0), x.view(qkv, 1), x.view(qkv, 2), {out.data(), x.d, x.d},
                         probs3.data(), len.data());
  for (std::int64_t h = 0; h < H; ++h) {
    std::vector<double> logit;
    for (std::int64_t s = std::max<std::int64_t>(0, h - 1); s <= std::min<std::int64_t>(H - 1, h + 1); ++s) {
      double dot = 0;
      for (std::int64_t e = 0; e < dh; ++e) dot += double(x.at(qkv, 0, 0, 0, h, e)) * x.at(qkv, 1, 0, 0, s, e);
      logit.push_back(dot / std::sqrt(double(dh)));
    }
    double sum = 0;
    for (double l : logit) sum += std::exp(l);
    for (std::int64_t e = 0; e < dh; ++e) {
      double want = 0;
      std::size_t idx = 0;
      for (std::int64_t s = std::max<std::int64_t>(0, h - 1); s <= std::min<std::int64_t>(H - 1, h + 1); ++s)
        want += std::exp(logit[idx++]) / sum * x.at(qkv, 2, 0, 0, s, e);
      REQUIRE(std::abs(out[h * dh + e] - want) <= 1e-6);
    }
  }
}

TEST_CASE("band attention: rows with no valid key give 0, padded values are never read", "[csan]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t N : {1, 3}) {
    const std::int64_t B = 2, T = 5, H = 3, dh = 4;
    const BandDims dims{B, H, dh, T, 2, 2, N};
    Qkv x(B, T, H, dh, 61);
    const std::vector<std::int32_t> lengths{0, 2};  // an empty sequence, and padding inside every window
    std::vector<float> dout = test::random_vector(B * T * x.d, 62);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = lengths[b]; t < T; ++t) {
        for (std::int64_t c = 0; c < 3 * x.d; ++c) x.data[(b * T + t) * 3 * x.d + c] = nan;
        for (std::int64_t c = 0; c < x.d; ++c) dout[(b * T + t) * x.d + c] = nan;
      }
    const KernelRun run = run_kernel(x, x.data, dout, lengths, dims, std::vector<float>(B * T * 3 * x.d, 0.0f));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < T; ++t) {
        const bool padded = t >= lengths[b];
        for (std::int64_t c = 0; c < x.d; ++c) {
          const float o = run.out[(b * T + t) * x.d + c];
          REQUIRE(std::isfinite(o));
          if (padded) REQUIRE(o == 0.0f);
        }
        for (std::int64_t c = 0; c < 3 * x.d; ++c) {
          const float g = run.grad[(b * T + t) * 3 * x.d + c];
          REQUIRE(std::isfinite(g));
          if (padded) REQUIRE(g == 0.0f);
        }
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t s = 0; s < dims.slots(); ++s) {
            const float p = run.probs[((b * H + h) * T + t) * dims.slots() + s];
            REQUIRE(std::isfinite(p));
            if (padded) REQUIRE(p == 0.0f);
          }
      }
  }
}

namespace {

using Fixture = attn::test::LayerFixture;

MixerSpec csan_spec(std::int64_t d, std::int64_t heads, std::int64_t window, std::int64_t head_window, bool causal,
                    const std::string& head_boundary = "drop") {
  return test::mixer_spec(
      "csan", d, heads, causal,
      {{"csan_window", window}, {"csan_head_window", head_window}, {"csan_head_boundary", head_boundary}});
}

}  // namespace

TEST_CASE("csan mixer: gradients of parameters and input match finite differences (1D, 2D, causal, wrap)", "[csan]") {
  for (std::int64_t N : {1, 3})
    for (bool causal : {false, true})
      for (const char* boundary : {"drop", "wrap"}) {
        if (std::string(boundary) == "wrap" && (N == 1 || causal)) continue;  // only the 2D encoder form differs
        INFO("head_window " << N << " causal " << causal << " boundary " << boundary);
        Fixture f;
        const CsanMixer mixer(f.params, "enc.0.self_attn", csan_spec(12, 3, 3, N, causal, boundary));
        f.ready();
        const std::int64_t B = 2, T = 6, d = 12;
        const std::vector<std::int32_t> lengths{6, 4};
        std::vector<float> x = test::random_vector(B * T * d, 71), w = test::random_vector(B * T * d, 72);
        for (std::int64_t t = lengths[1]; t < T; ++t)  // padded rows are outside the loss
          for (std::int64_t c = 0; c < d; ++c) w[(T + t) * d + c] = 0.0f;
        test::MixerLoss run(f, mixer, x, w, B, T, lengths.data());
        auto loss = [&] { return run.loss(); };
        std::vector<float> dx = run.backward();
        check_all_parameters(f.params, loss);
        // Only the valid positions: padded inputs have no gradient worth checking.
        check_gradient("x (sequence 0)", x.data(), dx.data(), T * d, loss, {.samples_per_tensor = 16}, 73);
        check_gradient("x (sequence 1)", x.data() + T * d, dx.data() + T * d, lengths[1] * d, loss,
                       {.samples_per_tensor = 10}, 74);
      }
}

TEST_CASE("csan mixer: a padded batch equals each sequence run alone (1D, 2D, 2D wrap)", "[csan]") {
  const std::pair<std::int64_t, const char*> variants[] = {{1, "drop"}, {3, "drop"}, {3, "wrap"}};
  for (const auto& [N, boundary] : variants) {
    INFO("head_window " << N << " boundary " << boundary);
    Fixture f;
    const std::int64_t d = 16, T = 8;
    const CsanMixer mixer(f.params, "enc.0.self_attn", csan_spec(d, 4, 5, N, false, boundary));
    f.ready(2);
    const std::vector<std::int32_t> lengths{8, 5}, alone{5};
    std::vector<float> x = test::random_vector(2 * T * d, 91), y(2 * T * d), y_alone(5 * d);
    for (std::int64_t c = (T + 5) * d; c < 2 * T * d; ++c) x[c] = 1e4f;  // padded positions of sequence 1
    mixer.forward(f.ctx, x.data(), y.data(), 2, T, lengths.data());
    mixer.forward(f.ctx, x.data() + T * d, y_alone.data(), 1, 5, alone.data());
    for (std::int64_t c = 0; c < 5 * d; ++c) REQUIRE(std::abs(y[T * d + c] - y_alone[c]) <= 1e-5f);
  }
}

TEST_CASE("csan mixer: same parameter names as the Transformer's attention, no new ones", "[csan]") {
  ParamStore a, b;
  const CsanMixer csan(a, "enc.1.self_attn", csan_spec(16, 4, 11, 3, false));
  const MhaMixer mha(b, "enc.1.self_attn", csan_spec(16, 4, 11, 3, false));
  REQUIRE(a.entries().size() == b.entries().size());
  for (std::size_t i = 0; i < a.entries().size(); ++i) {
    REQUIRE(a.entries()[i].name == b.entries()[i].name);
    REQUIRE(a.entries()[i].shape.numel() == b.entries()[i].shape.numel());
  }
  REQUIRE(a.find("enc.1.self_attn.q.weight") >= 0);
  REQUIRE(a.find("enc.1.self_attn.o.bias") >= 0);
  REQUIRE(csan.kind() == "csan2d");
  ParamStore c;
  REQUIRE(CsanMixer(c, "x", csan_spec(16, 4, 11, 1, false)).kind() == "csan");
  REQUIRE(csan.cache_width() == 32);
}

TEST_CASE("csan mixer, causal: the future never leaks, and step() equals the full forward", "[csan]") {
  for (std::int64_t N : {1, 3}) {
    INFO("head_window " << N);
    Fixture f;
    const std::int64_t B = 2, T = 9, d = 16, H = 4;
    const CsanMixer mixer(f.params, "dec.0.self_attn", csan_spec(d, H, 5, N, true));
    f.ready(3);
    const std::vector<std::int32_t> lengths{9, 9};
    std::vector<float> x = test::random_vector(B * T * d, 81), y_full(B * T * d), y2(B * T * d);
    mixer.forward(f.ctx, x.data(), y_full.data(), B, T, lengths.data());
    for (std::int64_t t = 0; t + 1 < T; ++t) {
      std::vector<float> changed = x;
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t c = 0; c < d; ++c) changed[(b * T + t + 1) * d + c] += 0.5f;
      f.arena.reset();
      mixer.forward(f.ctx, changed.data(), y2.data(), B, T, lengths.data());
      bool later_changed = false;
      for (std::int64_t b = 0; b < B; ++b) {
        for (std::int64_t c = 0; c < (t + 1) * d; ++c) REQUIRE(y2[b * T * d + c] == y_full[b * T * d + c]);
        for (std::int64_t c = 0; c < d; ++c)
          later_changed |= y2[(b * T + t + 1) * d + c] != y_full[(b * T + t + 1) * d + c];
      }
      REQUIRE(later_changed);
    }
    // Incremental decoding, one position at a time against a [B, T, 2d] cache.
    std::vector<float> cache(B * T * mixer.cache_width(), 0.0f), xt(B * d), yt(B * d);
    for (std::int64_t t = 0; t < T; ++t) {
      f.arena.reset();
      for (std::int64_t b = 0; b < B; ++b) std::memcpy(&xt[b * d], &x[(b * T + t) * d], sizeof(float) * d);
      mixer.step(f.ctx, xt.data(), yt.data(), B, t, cache.data(), T);
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t c = 0; c < d; ++c) {
          INFO("t " << t << " b " << b << " c " << c);
          REQUIRE(std::abs(yt[b * d + c] - y_full[(b * T + t) * d + c]) <= 1e-5f);
        }
    }
  }
  // Encoder variant cannot decode incrementally.
  Fixture f;
  const CsanMixer enc(f.params, "enc", csan_spec(8, 2, 3, 1, false));
  f.ready();
  std::vector<float> x(8), y(8), cache(16);
  REQUIRE_THROWS_AS(enc.step(f.ctx, x.data(), y.data(), 1, 0, cache.data(), 1), Error);
}

TEST_CASE("csan mixer: T = 1 gives the projected value of the token itself (1D)", "[csan]") {
  Fixture f;
  const std::int64_t d = 8;
  const CsanMixer mixer(f.params, "m", csan_spec(d, 2, 11, 1, false));
  f.ready();
  const std::vector<std::int32_t> len{1};
  std::vector<float> x = test::random_vector(d, 3), y(d), qkv(3 * d), want(d);
  mixer.forward(f.ctx, x.data(), y.data(), 1, 1, len.data());
  mixer.attention().qkv.forward(f.params, x.data(), qkv.data(), 1);
  mixer.attention().o.forward(f.params, qkv.data() + 2 * d, want.data(), 1);
  for (std::int64_t c = 0; c < d; ++c) REQUIRE(std::abs(y[c] - want[c]) <= 1e-6f);
}

TEST_CASE("csan mixer: export_maps expands the band into full rows, with the head area", "[csan]") {
  Fixture f;
  const std::int64_t B = 2, T = 7, d = 16, H = 4;
  const CsanMixer mixer(f.params, "enc.0.self_attn", csan_spec(d, H, 3, 3, false));
  f.ready();
  const std::vector<std::int32_t> lengths{7, 5};
  std::vector<float> x = test::random_vector(B * T * d, 5), y(B * T * d);
  const auto saved = mixer.forward(f.ctx, x.data(), y.data(), B, T, lengths.data());
  const auto& s = static_cast<const CsanMixer::Saved&>(*saved);
  for (std::int64_t b = 0; b < B; ++b) {
    const MixerMaps maps = mixer.export_maps(*saved, b);
    const std::int64_t L = lengths[b];
    test::require_map_shape(maps, H, L);
    REQUIRE(maps.extras["window"] == 3);
    REQUIRE(maps.extras["left"] == 1);
    REQUIRE(maps.extras["right"] == 1);
    REQUIRE(maps.extras["head_window"] == 3);
    const auto& hw = maps.extras["head_weights"];
    REQUIRE(hw.size() == static_cast<std::size_t>(H));
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < L; ++i) {
        double row_sum = 0, area_sum = 0;
        for (std::int64_t j = 0; j < L; ++j) {
          const float w = maps.weights[(h * L + i) * L + j];
          row_sum += w;
          if (std::abs(i - j) > 1) REQUIRE(w == 0.0f);
          // The sum over key heads of the band probabilities at key j.
          double want = 0;
          if (std::abs(i - j) <= 1)
            for (std::int64_t so = 0; so < 3; ++so) want += s.probs[(((b * H + h) * T + i) * 3 + so) * 3 + (j - i + 1)];
          REQUIRE(std::abs(w - want) <= 1e-6);
        }
        REQUIRE(std::abs(row_sum - 1.0) <= 1e-5);
        REQUIRE(hw[h][i].size() == 3);
        for (std::int64_t so = 0; so < 3; ++so) {
          const bool dropped = h + so - 1 < 0 || h + so - 1 >= H;
          REQUIRE(hw[h][i][so].is_null() == dropped);
          if (!dropped) area_sum += hw[h][i][so].get<double>();
        }
        REQUIRE(std::abs(area_sum - 1.0) <= 1e-5);
      }
  }
}

TEST_CASE("csan mixer: even or non-positive windows are rejected, naming the flag", "[csan]") {
  for (std::int64_t window : {0, -3, 4, 10}) {
    ParamStore p;
    REQUIRE_THROWS_WITH(CsanMixer(p, "m", csan_spec(8, 2, window, 1, false)), Catch::Contains("--csan-window"));
    REQUIRE(p.entries().empty());
  }
  for (std::int64_t head_window : {0, -1, 2}) {
    ParamStore p;
    REQUIRE_THROWS_WITH(CsanMixer(p, "m", csan_spec(8, 2, 11, head_window, false)),
                        Catch::Contains("--csan-head-window"));
  }
  ParamStore p;
  REQUIRE_THROWS_AS(CsanMixer(p, "m", csan_spec(10, 4, 11, 1, false)), Error);
  REQUIRE_NOTHROW(CsanMixer(p, "m", csan_spec(8, 2, 1, 1, false)));
}
