// What the FP32 and the low-precision GEMM drivers share: scaling C alone,
// pack buffers, the team's yielding barrier and the split of C between
// threads. A product comes in stride form (../product.h).
#pragma once
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <omp.h>

#include "isa.h"
#include "attn/core/tensor.h"
#include "../product.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// op(B) (n columns over k steps: column j, step p at b[j·col_stride +
// p·step_stride]) packed once, as a product packs it block by block: k
// blocks of kc_len steps (the last shorter), each cut into panels of kCols
// columns, every panel panel_size words (zeros past n and k):
//   panel p of block kb at words[(kb·panels + p)·panel_size].
// pack_panel(src, col_stride, step_stride, width, kc, out) packs one panel.
template <int kCols, typename Word, typename PackPanel>
void pack_b_blocks(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                   std::int64_t kc_len, std::int64_t panel_size, std::vector<Word>& words, PackPanel pack_panel) {
  if (n == 0 || k == 0) {
    words.clear();
    return;
  }
  const std::int64_t k_blocks = ceil_div(k, kc_len), panels = ceil_div(n, kCols);
  words.assign(static_cast<std::size_t>(k_blocks * panels * panel_size), Word{});
  for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
    const std::int64_t p0 = kb * kc_len, kc = std::min(kc_len, k - p0);
    for (std::int64_t panel = 0; panel < panels; ++panel) {
      const std::int64_t j = panel * kCols;
      pack_panel(b + j * col_stride + p0 * step_stride, col_stride, step_stride,
                 static_cast<int>(std::min<std::int64_t>(kCols, n - j)), kc,
                 words.data() + (kb * panels + panel) * panel_size);
    }
  }
}

// One thread's pack buffer, grown to the largest request and then reused.
// T is float (FP32 panels) or a 4-byte pair of bf16 / quad of int8.
template <typename T>
class PackBuffer {
  static_assert(sizeof(T) == sizeof(float));

 public:
  T* get(std::int64_t elements) {
    if (elements > capacity_) {
      data_ = allocate_floats(static_cast<std::size_t>(elements));
      capacity_ = elements;
    }
    return reinterpret_cast<T*>(data_.get());
  }

 private:
  AlignedFloats data_;
  std::int64_t capacity_ = 0;
};

// C = beta·C over m×n (the whole product when k == 0 or alpha == 0).
inline void scale_c(const Product& p) {
  for (std::int64_t i = 0; i < p.m; ++i) {
    float* row = p.c + i * p.ldc;
    if (p.beta == 0.0f)
      std::fill(row, row + p.n, 0.0f);
    else if (p.beta != 1.0f)
      for (std::int64_t j = 0; j < p.n; ++j) row[j] *= p.beta;
  }
}

// Does what a product with nothing to multiply does (m or n = 0: nothing;
// k = 0 or alpha = 0: C = beta·C without reading A or B) and says so.
inline bool trivial_product(const Product& p) {
  if (p.m == 0 || p.n == 0) return true;
  if (p.k != 0 && p.alpha != 0.0f) return false;
  scale_c(p);
  return true;
}

// The threads one product runs on: 1 when it may not use more, runs inside a
// parallel region, or has under min_macs multiply-adds (waking the team would
// cost more than it gives).
inline int product_threads(const Product& p, bool allow_threads, std::int64_t min_macs) {
  if (!allow_threads || omp_in_parallel() || p.m * p.n * p.k < min_macs) return 1;
  return omp_get_max_threads();
}

// Threads of one product wait for each other here rather than in OpenMP's
// barriers, which spin: on this 2-core machine, with anything else running,
// a spinning thread can hold the core its late partner needs. This one spins
// briefly, then yields the core.
class YieldingBarrier {
 public:
  explicit YieldingBarrier(int threads) : threads_(threads) {}
  void wait() {
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins)
      if (spins >= kSpinsBeforeYield) sched_yield();
  }

 private:
  static constexpr int kSpinsBeforeYield = 2000;
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

// Splits `threads` into a grid_m × grid_n grid of C regions of whole tiles
// (tile_rows × tile_cols), minimising the largest region's multiply-adds plus
// its packing (each region packs its own rows of A and columns of B). On a
// tie the rows are split.
inline void choose_grid(int threads, std::int64_t m_panels, std::int64_t n_panels, int tile_rows, int tile_cols,
                        int& grid_m, int& grid_n) {
  double best = -1.0;
  for (int gm = threads; gm >= 1; --gm) {
    if (threads % gm != 0) continue;
    const int gn = threads / gm;
    const double rows = static_cast<double>(ceil_div(m_panels, gm) * tile_rows);
    const double cols = static_cast<double>(ceil_div(n_panels, gn) * tile_cols);
    const double cost = rows * cols + 32.0 * (rows + cols);
    if (best < 0 || cost < 0.999 * best) {
      best = cost;
      grid_m = gm;
      grid_n = gn;
    }
  }
}

// Thread t's region [m0, m1) × [n0, n1) of a grid_m × grid_n split of C into
// whole tiles (empty when the grid has more cells than tiles).
struct Region {
  std::int64_t m0, m1, n0, n1;
};
inline Region grid_region(int t, int grid_m, int grid_n, std::int64_t m, std::int64_t n, int tile_rows, int tile_cols) {
  const std::int64_t m_panels = ceil_div(m, tile_rows), n_panels = ceil_div(n, tile_cols);
  const std::int64_t tm = t / grid_n, tn = t % grid_n;
  return {std::min(m, m_panels * tm / grid_m * tile_rows), std::min(m, m_panels * (tm + 1) / grid_m * tile_rows),
          std::min(n, n_panels * tn / grid_n * tile_cols), std::min(n, n_panels * (tn + 1) / grid_n * tile_cols)};
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
