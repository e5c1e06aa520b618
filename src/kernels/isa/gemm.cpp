// SGEMM driver: cache blocking (NC columns × KC steps of B packed per block,
// A packed for a few row panels at a time), register tiles (gemm_tile.h)
// over the packed panels, and threads over row panels or a grid of C regions.
//
// Threads never split k: each thread computes whole tiles of C (a fixed
// rectangle, or groups of row panels taken as it goes), packing what it
// needs into its own buffers. The k blocks are fixed by k alone, so every C
// element is computed by the same sequence of operations whatever the
// thread count.
#include "isa.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <omp.h>

#include "attn/core/error.h"
#include "kernels.h"
#include "gemm_common.h"
#include "gemm_dot.h"
#include "gemm_pack.h"
#include "gemm_tile.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {

// L1d is 48 KiB, L2 2 MiB per core: an A micro-panel (KC × kTileRows, 14 KiB)
// stays in L1 while the B block (KC × NC, 1 MiB) streams from L2 past it.
constexpr std::int64_t kKcMax = 256;
constexpr std::int64_t kNcMax = kTileCols * (ATTN_ISA_LEVEL == 2 ? 32 : 64);
// Up to this many rows of C, tiles read a k×n-stored B in place: packing it
// would cost about as much as the product.
constexpr std::int64_t kDirectBMaxRows = 64;
// Up to this many multiply-adds per region, tiles read A in place too (the
// whole of A then stays in cache while it is reused).
constexpr std::int64_t kDirectAMaxMacs = ATTN_ISA_LEVEL == 0 ? 0 : std::int64_t{1} << 22;
// Row panels per unit of work: their packed A (56 KiB) stays in L2.
constexpr std::int64_t kGroupPanels = 4;
// Packed B of up to this many floats (1 MiB) stays in L2 over all of k.
constexpr std::int64_t kWholeKMaxFloats = std::int64_t{1} << 18;
// Threads share out row panels as they go when there are at least this many
// per thread (4 groups); fewer, and each gets a fixed rectangle of C.
constexpr std::int64_t kSharedRowsMinPanels = 4 * kGroupPanels;

static_assert(kTileCols == kFp32PanelCols, "the table's panel width is the tiles'");

// The k blocks of a product over k steps: kc_len steps each, the last shorter
// (fixed by k alone, so a packed B and the product agree on them).
std::int64_t kc_len_for(std::int64_t k) { return ceil_div(k, ceil_div(k, kKcMax)); }

struct ThreadBuffers {
  PackBuffer<float> a, b;
};
ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers buffers;
  return buffers;
}

// `steps` panel counters of the calling thread, kept from product to product
// (grown, never shrunk: a product allocates nothing once sizes stop growing).
std::atomic<std::int64_t>* panel_counters(std::int64_t steps) {
  static thread_local std::unique_ptr<std::atomic<std::int64_t>[]> counters;
  static thread_local std::int64_t capacity = 0;
  if (steps > capacity) {
    counters = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(steps));
    capacity = steps;
  }
  return counters.get();
}

// What the threads of one product share when they take row panels as they go.
struct SharedRows {
  SharedRows(int threads, std::int64_t steps) : barrier(threads), next_panel(panel_counters(steps)) {
    for (std::int64_t s = 0; s < steps; ++s) next_panel[s].store(0, std::memory_order_relaxed);
  }
  YieldingBarrier barrier;
  std::atomic<std::int64_t>* next_panel;  // per (column block, k block) step
};

// The product restricted to C rows [m0, m1) and columns [n0, n1). m0 and n0
// are multiples of the tile size. With `shared`, every thread of the team
// calls this with the same region and takes row panels as it goes: a thread
// the OS delays then costs its share only, not a wait at the end.
//
// Loop order: NC columns → KC steps (B block packed, ~1 MiB, stays in L2;
// all k blocks at once when they fit) → groups of kGroupPanels row panels
// (A packed) → k blocks of the step → one A micro-panel (L1) against every B
// micro-panel of the block. When op(B) is stored k×n and few rows of C share
// each B panel, the tiles read B in place instead of packing it; small
// products read A in place too. A few rows against a B stored n×k go to dot
// products (gemm_dot.h). With `packed`, op(B) is read from it, already in the
// panels a block would be packed into.
void run_region(const Product& p, const Fp32PackedB* packed, std::int64_t m0, std::int64_t m1, std::int64_t n0,
                std::int64_t n1, SharedRows* shared) {
  // Chosen by the whole product's shape, never by the region's, so that the
  // rounding does not depend on the thread count.
  if (!packed && p.m <= kDotMaxRows && p.a_step == 1 && p.b_step == 1) {
    gemm_dot(static_cast<int>(m1 - m0), n1 - n0, p.k, p.alpha, p.a + m0 * p.a_row, p.a_row, p.b + n0 * p.b_col, p.b_col,
             p.beta, p.c + m0 * p.ldc + n0, p.ldc);
    return;
  }
  ThreadBuffers& buffers = thread_buffers();
  const std::int64_t kc_len = kc_len_for(p.k), k_blocks = ceil_div(p.k, kc_len);
  // Whole 14-row tiles: equal-height panels (13+13 for 26 rows) measured
  // slower, the 13-row tile compiling worse than the 14-row one.
  const std::int64_t panel_rows = kTileRows;
  const std::int64_t m_panels = ceil_div(m1 - m0, panel_rows);
  const bool direct_b = !packed && p.b_col == 1 && m1 - m0 <= kDirectBMaxRows;
  const bool direct_a = (m1 - m0) * (n1 - n0) * p.k <= kDirectAMaxMacs;
  // kGroupPanels × [kc × kTileRows]
  float* a_packed = direct_a ? nullptr : buffers.a.get(kGroupPanels * kTileRows * kc_len);
  std::int64_t step = 0;
  for (std::int64_t jc = n0; jc < n1; jc += kNcMax) {
    const std::int64_t nc = std::min(kNcMax, n1 - jc);
    const std::int64_t n_panels = ceil_div(nc, kTileCols);
    // When B packed over all of k still fits in L2, one step covers every k
    // block: each group of row panels then runs its k blocks back to back
    // (its C tiles stay in cache) and threads need no barrier between them.
    const std::int64_t b_block_floats = n_panels * kTileCols * kc_len;
    const std::int64_t blocks_per_step = b_block_floats * k_blocks <= kWholeKMaxFloats ? k_blocks : 1;
    for (std::int64_t kb0 = 0; kb0 < k_blocks; kb0 += blocks_per_step, ++step) {
      const std::int64_t kb1 = std::min(k_blocks, kb0 + blocks_per_step);
      // k block kb of B: n_panels micro-panels of [kc × kTileCols], packed at
      // b_packed + (kb − kb0)·b_block_floats.
      float* b_packed = direct_b || packed ? nullptr : buffers.b.get(b_block_floats * (kb1 - kb0));
      if (b_packed)
        for (std::int64_t kb = kb0; kb < kb1; ++kb) {
          const std::int64_t p0 = kb * kc_len, kc = std::min(kc_len, p.k - p0);
          for (std::int64_t jp = 0; jp < n_panels; ++jp) {
            const std::int64_t j = jc + jp * kTileCols;
            pack_panel<kTileCols>(p.b + j * p.b_col + p0 * p.b_step, p.b_col, p.b_step,
                                  static_cast<int>(std::min<std::int64_t>(kTileCols, n1 - j)), kc,
                                  b_packed + (kb - kb0) * b_block_floats + jp * kTileCols * kc);
          }
        }
      // A group of row panels runs each k block in turn: its A is packed for
      // the whole group at once (reading op(A) in long runs), then every panel
      // of the group meets every B micro-panel of the block.
      auto row_group = [&](std::int64_t group) {
        const std::int64_t ip0 = group * kGroupPanels, ip1 = std::min(m_panels, ip0 + kGroupPanels);
        for (std::int64_t kb = kb0; kb < kb1; ++kb) {
          const std::int64_t p0 = kb * kc_len, kc = std::min(kc_len, p.k - p0);
          const float beta = kb == 0 ? p.beta : 1.0f;
          // B micro-panel jp: b_block + jp·b_panel_stride, rows b_step apart.
          const float* b_block = nullptr;
          std::int64_t b_panel_stride = kTileCols * kc, b_step = kTileCols;
          if (packed) {
            // Every panel of a packed B is kc_len steps long, the last block's too.
            b_block = packed->values.data() + (kb * ceil_div(p.n, kTileCols) + jc / kTileCols) * kTileCols * kc_len;
            b_panel_stride = kTileCols * kc_len;
          } else if (direct_b) {
            b_block = p.b + jc * p.b_col + p0 * p.b_step;
            b_panel_stride = kTileCols;
            b_step = p.b_step;
          } else {
            b_block = b_packed + (kb - kb0) * b_block_floats;
          }
          if (!direct_a)
            for (std::int64_t ip = ip0; ip < ip1; ++ip) {
              const std::int64_t i = m0 + ip * panel_rows;
              pack_panel<kTileRows>(p.a + i * p.a_row + p0 * p.a_step, p.a_row, p.a_step,
                                    static_cast<int>(std::min(panel_rows, m1 - i)), kc,
                                    a_packed + (ip - ip0) * kTileRows * kc);
            }
          for (std::int64_t ip = ip0; ip < ip1; ++ip) {
            const std::int64_t i = m0 + ip * panel_rows;
            const int rows = static_cast<int>(std::min(panel_rows, m1 - i));
            // Element (r, p) of the A micro-panel is a_panel[r·a_row + p·a_step].
            const float* a_panel = p.a + i * p.a_row + p0 * p.a_step;
            std::int64_t a_row = p.a_row, a_step = p.a_step;
            if (!direct_a) {
              a_panel = a_packed + (ip - ip0) * kTileRows * kc;
              a_row = 1;
              a_step = kTileRows;
            }
            for (std::int64_t jp = 0; jp < n_panels; ++jp) {
              const std::int64_t j = jc + jp * kTileCols;
              const int cols = static_cast<int>(std::min<std::int64_t>(kTileCols, n1 - j));
              gemm_tile_for(rows, cols, !direct_a)(kc, a_panel, a_row, a_step, b_block + jp * b_panel_stride, b_step,
                                                   p.c + i * p.ldc + j, p.ldc, cols, p.alpha, beta);
            }
          }
        }
      };
      const std::int64_t groups = ceil_div(m_panels, kGroupPanels);
      if (shared) {
        std::atomic<std::int64_t>& next = shared->next_panel[step];
        for (std::int64_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < groups;) row_group(g);
        // A row panel's next k block (in the next step) must wait for this one.
        shared->barrier.wait();
      } else {
        for (std::int64_t g = 0; g < groups; ++g) row_group(g);
      }
    }
  }
}

}  // namespace

void fp32_product(const Product& p, const Fp32PackedB* packed, bool allow_threads) {
  if (trivial_product(p)) return;
  const int threads = product_threads(p, allow_threads, kParallelMinMacs);
  if (threads == 1) {
    run_region(p, packed, 0, p.m, 0, p.n, nullptr);
    return;
  }
  const std::int64_t m_panels = ceil_div(p.m, kTileRows), n_panels = ceil_div(p.n, kTileCols);
  int grid_m = 1, grid_n = 1;
  choose_grid(threads, m_panels, n_panels, kTileRows, kTileCols, grid_m, grid_n);
  // Splitting rows only, with rows to spare: share them out as they get done.
  const bool share_rows = grid_m == threads && m_panels >= kSharedRowsMinPanels * threads;
  SharedRows shared(threads, share_rows ? ceil_div(p.n, kNcMax) * ceil_div(p.k, kKcMax) : 0);
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), t = omp_get_thread_num();
    // The team is smaller than asked for only when OpenMP is short of
    // threads; then it splits C into fixed rectangles for what it got.
    int gm = grid_m, gn = grid_n;
    if (team != threads) choose_grid(team, m_panels, n_panels, kTileRows, kTileCols, gm, gn);
    if (team == threads && share_rows) {
      run_region(p, packed, 0, p.m, 0, p.n, &shared);
    } else {
      const Region r = grid_region(t, gm, gn, p.m, p.n, kTileRows, kTileCols);
      if (r.m0 < r.m1 && r.n0 < r.n1) run_region(p, packed, r.m0, r.m1, r.n0, r.n1, nullptr);
      // Wait here (yielding) rather than at OpenMP's closing barrier (spinning).
      if (team == threads) shared.barrier.wait();
    }
  }
}

void pack_fp32_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Fp32PackedB& packed) {
  if (n < 0 || k < 0) throw Error("pack_fp32_b: a negative size");
  packed.n = n;
  packed.k = k;
  packed.panel_cols = kTileCols;
  packed.kc_len = n > 0 && k > 0 ? kc_len_for(k) : 0;
  pack_b_blocks<kTileCols>(b, col_stride, step_stride, n, k, packed.kc_len, packed.kc_len * kTileCols, packed.values,
                           pack_panel<kTileCols>);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
