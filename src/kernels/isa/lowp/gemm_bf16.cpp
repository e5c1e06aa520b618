// bf16 GEMM driver: B packed to bf16 pairs per block of NC columns × KC steps
// (bf16_pack.h), A packed one row panel at a time, register tiles
// (bf16_tile.h), threads over a grid of C regions. As in the FP32 driver,
// threads never split k and the k blocks are fixed by k alone, so a C
// element's arithmetic depends on neither the thread count nor the ISA.
#include "../isa.h"

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "../gemm_common.h"
#include "attn/core/error.h"
#include "attn/kernels/gemm_bf16.h"
#include "bf16_pack.h"
#include "bf16_tile.h"
#include "../kernels.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {

// A B block of NC × KC bf16 (1 MiB at most) stays in L2; an A panel (14 rows ×
// KC, 14 KiB) in L1.
constexpr std::int64_t kNcMax = 1024;

struct Bf16Buffers {
  PackBuffer<std::uint32_t> a, b;
};
Bf16Buffers& bf16_buffers() {
  thread_local Bf16Buffers buffers;
  return buffers;
}

// The k blocks of a product over k steps: kc_len steps each (even), the last shorter.
std::int64_t bf16_kc_len(std::int64_t k) {
  const std::int64_t k_blocks = ceil_div(k, kBf16KBlock);
  return (ceil_div(k, k_blocks) + 1) / 2 * 2;
}

// C's rows m0…m1 and columns n0…n1 (n0 a multiple of kBf16TileCols). With
// `packed`, op(B) is read from it; otherwise each block of it is packed here.
void run_region(const Product& p, const Bf16PackedB* packed, std::int64_t m0, std::int64_t m1, std::int64_t n0,
                std::int64_t n1) {
  Bf16Buffers& buffers = bf16_buffers();
  const std::int64_t kc_len = bf16_kc_len(p.k), k_blocks = ceil_div(p.k, kc_len);
  const std::int64_t kp_len = kc_len / 2;
  std::uint32_t* a_packed = buffers.a.get(kBf16TileRows * kp_len);  // [kp × kBf16TileRows]
  for (std::int64_t jc = n0; jc < n1; jc += kNcMax) {
    const std::int64_t nc = std::min(kNcMax, n1 - jc);
    const std::int64_t n_panels = ceil_div(nc, kBf16TileCols);
    std::uint32_t* b_buffer = packed ? nullptr
                                     : buffers.b.get(n_panels * kBf16TileCols * kp_len);  // n_panels × [kp × cols]
    for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
      const std::int64_t p0 = kb * kc_len, kc = std::min(kc_len, p.k - p0), kp = (kc + 1) / 2;
      const float beta = kb == 0 ? p.beta : 1.0f;
      // Panel jp of this block: kp pairs, kBf16TileCols apart.
      const std::uint32_t* b_panels = nullptr;
      std::int64_t panel_stride = 0;
      if (packed) {
        b_panels = packed->pairs.data() +
                   (kb * ceil_div(p.n, kBf16TileCols) + jc / kBf16TileCols) * kp_len * kBf16TileCols;
        panel_stride = kp_len * kBf16TileCols;
      } else {
        for (std::int64_t jp = 0; jp < n_panels; ++jp) {
          const std::int64_t j = jc + jp * kBf16TileCols;
          pack_bf16<kBf16TileCols>(p.b + j * p.b_col + p0 * p.b_step, p.b_col, p.b_step,
                                   static_cast<int>(std::min<std::int64_t>(kBf16TileCols, n1 - j)), kc,
                                   b_buffer + jp * kBf16TileCols * kp);
        }
        b_panels = b_buffer;
        panel_stride = kBf16TileCols * kp;
      }
      for (std::int64_t i = m0; i < m1; i += kBf16TileRows) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kBf16TileRows, m1 - i));
        pack_bf16<kBf16TileRows>(p.a + i * p.a_row + p0 * p.a_step, p.a_row, p.a_step, rows, kc, a_packed);
        for (std::int64_t jp = 0; jp < n_panels; ++jp) {
          const std::int64_t j = jc + jp * kBf16TileCols;
          const int cols = static_cast<int>(std::min<std::int64_t>(kBf16TileCols, n1 - j));
          bf16_tile_for(rows, cols)(kp, a_packed, b_panels + jp * panel_stride, p.c + i * p.ldc + j, p.ldc, cols,
                                    p.alpha, beta);
        }
      }
    }
  }
}

}  // namespace

void bf16_product(const Product& p, const Bf16PackedB* packed, bool allow_threads) {
  if (trivial_product(p)) return;
  const int threads = product_threads(p, allow_threads, kParallelMinMacs);
  if (threads == 1) {
    run_region(p, packed, 0, p.m, 0, p.n);
    return;
  }
  const std::int64_t m_panels = ceil_div(p.m, kBf16TileRows), n_panels = ceil_div(p.n, kBf16TileCols);
  YieldingBarrier barrier(threads);
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads();
    int grid_m = 1, grid_n = 1;
    choose_grid(team, m_panels, n_panels, kBf16TileRows, kBf16TileCols, grid_m, grid_n);
    const Region r = grid_region(omp_get_thread_num(), grid_m, grid_n, p.m, p.n, kBf16TileRows, kBf16TileCols);
    if (r.m0 < r.m1 && r.n0 < r.n1) run_region(p, packed, r.m0, r.m1, r.n0, r.n1);
    // Wait here (yielding) rather than at OpenMP's closing barrier (spinning).
    if (team == threads) barrier.wait();
  }
}

void pack_bf16_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Bf16PackedB& packed) {
  if (n < 0 || k < 0) throw Error("pack_bf16_b: a negative size");
  packed.n = n;
  packed.k = k;
  packed.panel_cols = kBf16TileCols;
  packed.kc_len = n > 0 && k > 0 ? bf16_kc_len(k) : 0;
  pack_b_blocks<kBf16TileCols>(b, col_stride, step_stride, n, k, packed.kc_len, packed.kc_len / 2 * kBf16TileCols,
                               packed.pairs, pack_bf16<kBf16TileCols>);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
