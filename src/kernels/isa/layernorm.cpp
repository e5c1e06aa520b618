// LayerNorm rows in parallel. The parameter gradients are summed per fixed
// block of rows and the block partials added in block order, so dgamma and
// dbeta are bitwise the same for any thread count.
#include "isa.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/kernels/layernorm.h"

#include "kernels.h"
#include "parallel_for.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
constexpr std::int64_t kRowBlock = 32;     // rows per dgamma/dbeta partial; fixed, never per thread
constexpr std::int64_t kColumnBlock = 64;  // columns per unit of work when the partials are summed
}  // namespace

void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                       std::int64_t rows, std::int64_t d, float eps) {
  if (d == 0) return;
  const float inverse_d = 1.0f / static_cast<float>(d);
  parallel_for(rows, rows * d, [=](std::int64_t r) {
    const float* x_row = x + r * d;
    float* y_row = y + r * d;
    // Two passes: the variance of the centred values does not cancel.
    const float row_mean = vec_math::sum(x_row, d) * inverse_d;
    auto centred_square = [=](vec_math::Vec x_part) {
      const vec_math::Vec centred = x_part - row_mean;
      return centred * centred;
    };
    const float variance =
        vec_math::sum_of(
            d, [=](std::int64_t j) { return centred_square(vec_math::load(x_row + j)); },
            [=](std::int64_t j, std::int64_t count) {
              return centred_square(vec_math::load_partial(x_row + j, count, row_mean));  // missing lanes: 0
            }) *
        inverse_d;
    const float row_rstd = 1.0f / std::sqrt(variance + eps);
    for (std::int64_t j = 0; j < d; ++j) y_row[j] = (x_row[j] - row_mean) * row_rstd * gamma[j] + beta[j];
    mean[r] = row_mean;
    rstd[r] = row_rstd;
  });
}

void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
  if (rows == 0 || d == 0) return;
  const bool want_affine = dgamma != nullptr || dbeta != nullptr;
  const std::int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  // [blocks, 2, d]: per block, the dgamma then the dbeta partial. Kept per
  // calling thread and reused, so steady-state training does not allocate.
  thread_local std::vector<float> partials;
  if (want_affine) partials.assign(static_cast<std::size_t>(blocks * 2 * d), 0.0f);
  float* partial_base = partials.data();
  const float inverse_d = 1.0f / static_cast<float>(d);

  parallel_for(blocks, rows * d, [=](std::int64_t blk) {
    float* dgamma_part = want_affine ? partial_base + blk * 2 * d : nullptr;
    float* dbeta_part = want_affine ? dgamma_part + d : nullptr;
    const std::int64_t r_end = std::min(rows, (blk + 1) * kRowBlock);
    for (std::int64_t r = blk * kRowBlock; r < r_end; ++r) {
      const float* dy_row = dy + r * d;
      const float* x_row = x + r * d;
      float* dx_row = dx + r * d;
      const float row_mean = mean[r], row_rstd = rstd[r];
      // With g = dy ⊙ gamma and x̂ the normalised input:
      // dx = rstd · (g − mean(g) − x̂ · mean(g ⊙ x̂)).
      const float g_mean = vec_math::dot(dy_row, gamma, d) * inverse_d;
      auto g_xhat = [=](vec_math::Vec dy_part, vec_math::Vec gamma_part, vec_math::Vec x_part) {
        return dy_part * gamma_part * ((x_part - row_mean) * row_rstd);
      };
      const float g_xhat_mean =
          vec_math::sum_of(
              d,
              [=](std::int64_t j) {
                return g_xhat(vec_math::load(dy_row + j), vec_math::load(gamma + j), vec_math::load(x_row + j));
              },
              [=](std::int64_t j, std::int64_t count) {  // missing lanes: dy = 0
                return g_xhat(vec_math::load_partial(dy_row + j, count, 0.0f),
                              vec_math::load_partial(gamma + j, count, 0.0f),
                              vec_math::load_partial(x_row + j, count, 0.0f));
              }) *
          inverse_d;
      for (std::int64_t j = 0; j < d; ++j) {
        const float xhat = (x_row[j] - row_mean) * row_rstd;
        dx_row[j] += row_rstd * (dy_row[j] * gamma[j] - g_mean - xhat * g_xhat_mean);
      }
      if (want_affine) {
        for (std::int64_t j = 0; j < d; ++j) {
          dgamma_part[j] += dy_row[j] * ((x_row[j] - row_mean) * row_rstd);
          dbeta_part[j] += dy_row[j];
        }
      }
    }
  });
  if (!want_affine) return;

  // Column by column, the block partials in block order.
  const std::int64_t column_blocks = (d + kColumnBlock - 1) / kColumnBlock;
  parallel_for(column_blocks, blocks * d, [=](std::int64_t cb) {
    const std::int64_t j0 = cb * kColumnBlock, j1 = std::min(d, j0 + kColumnBlock);
    float* dgamma_total = partial_base;  // block 0's partials become the totals
    float* dbeta_total = partial_base + d;
    for (std::int64_t blk = 1; blk < blocks; ++blk) {
      const float* dgamma_part = partial_base + blk * 2 * d;
      const float* dbeta_part = dgamma_part + d;
      for (std::int64_t j = j0; j < j1; ++j) {
        dgamma_total[j] += dgamma_part[j];
        dbeta_total[j] += dbeta_part[j];
      }
    }
    for (std::int64_t j = j0; j < j1; ++j) {
      if (dgamma != nullptr) dgamma[j] += dgamma_total[j];
      if (dbeta != nullptr) dbeta[j] += dbeta_total[j];
    }
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
