// bf16 GEMM driver: B packed to bf16 pairs per block of NC columns × KC steps
// (bf16_pack.h), A packed one row panel at a time, register tiles
// (bf16_tile.h), threads over a grid of C regions. As in the FP32 driver,
// threads never split k and the k blocks are fixed by k alone, so a C
// element's arithmetic depends on neither the thread count nor the ISA.
#include "../isa.h"

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "attn/kernels/gemm_bf16.h"
#include "../../gemm_shape.h"
#include "../gemm_common.h"
#include "bf16_pack.h"
#include "bf16_tile.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {
ATTN_GEMM_BF16_KERNELS(ATTN_DECLARE_KERNEL)

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

void run_region(const Product& p, std::int64_t m0, std::int64_t m1, std::int64_t n0, std::int64_t n1) {
  Bf16Buffers& buffers = bf16_buffers();
  const std::int64_t k_blocks = ceil_div(p.k, kBf16KBlock);
  const std::int64_t kc_len = (ceil_div(p.k, k_blocks) + 1) / 2 * 2;
  const std::int64_t kp_len = kc_len / 2;
  std::uint32_t* a_packed = buffers.a.get(kBf16TileRows * kp_len);  // [kp × kBf16TileRows]
  for (std::int64_t jc = n0; jc < n1; jc += kNcMax) {
    const std::int64_t nc = std::min(kNcMax, n1 - jc);
    const std::int64_t n_panels = ceil_div(nc, kBf16TileCols);
    std::uint32_t* b_packed = buffers.b.get(n_panels * kBf16TileCols * kp_len);  // n_panels × [kp × cols]
    for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
      const std::int64_t p0 = kb * kc_len, kc = std::min(kc_len, p.k - p0), kp = (kc + 1) / 2;
      const float beta = kb == 0 ? p.beta : 1.0f;
      for (std::int64_t jp = 0; jp < n_panels; ++jp) {
        const std::int64_t j = jc + jp * kBf16TileCols;
        pack_bf16<kBf16TileCols>(p.b + j * p.b_col + p0 * p.b_step, p.b_col, p.b_step,
                                 static_cast<int>(std::min<std::int64_t>(kBf16TileCols, n1 - j)), kc,
                                 b_packed + jp * kBf16TileCols * kp);
      }
      for (std::int64_t i = m0; i < m1; i += kBf16TileRows) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kBf16TileRows, m1 - i));
        pack_bf16<kBf16TileRows>(p.a + i * p.a_row + p0 * p.a_step, p.a_row, p.a_step, rows, kc, a_packed);
        for (std::int64_t jp = 0; jp < n_panels; ++jp) {
          const std::int64_t j = jc + jp * kBf16TileCols;
          const int cols = static_cast<int>(std::min<std::int64_t>(kBf16TileCols, n1 - j));
          bf16_tile_for(rows, cols)(kp, a_packed, b_packed + jp * kBf16TileCols * kp, p.c + i * p.ldc + j, p.ldc,
                                    cols, p.alpha, beta);
        }
      }
    }
  }
}

void run_product(const Product& p, bool allow_threads) {
  if (trivial_product(p)) return;
  const int threads = product_threads(p, allow_threads, kParallelMinMacs);
  if (threads == 1) {
    run_region(p, 0, p.m, 0, p.n);
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
    if (r.m0 < r.m1 && r.n0 < r.n1) run_region(p, r.m0, r.m1, r.n0, r.n1);
    // Wait here (yielding) rather than at OpenMP's closing barrier (spinning).
    if (team == threads) barrier.wait();
  }
}

}  // namespace

void gemm_bf16(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc) {
  check_gemm_shape(trans_a, trans_b, m, n, k, lda, ldb, ldc);
  run_product(make_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), true);
}

void gemm_bf16_batched(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                       const float* a, std::int64_t lda, std::int64_t stride_a, const float* b, std::int64_t ldb,
                       std::int64_t stride_b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch) {
  check_gemm_shape(trans_a, trans_b, m, n, k, lda, ldb, ldc, batch);
  if (batch == 0 || m == 0 || n == 0) return;
  const Product first = make_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  run_batch(first, stride_a, stride_b, stride_c, batch, kParallelMinMacs, &run_product);
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
