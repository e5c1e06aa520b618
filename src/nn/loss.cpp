#include "attn/nn/loss.h"

#include <cmath>
#include <span>

#include "attn/core/scratch.h"
#include "attn/core/tensor.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/products.h"
#include "attn/kernels/softmax.h"

namespace attn::nn {

using kernels::Trans;

namespace {

constexpr std::int64_t kChunkRows = 256;  // [256, 8000] logits = 8 MB: stays in L2/L3

// In place on one row x: [vocab]: the softmax probabilities; returns
// logsumexp(x). p at the arg-max is 1 / Σ exp(x − max) ≥ 1 / vocab, so its log
// never underflows, and lse = max − log p_max.
double softmax_row_lse(float* x, std::int64_t vocab) {
  const float m = kernels::max_value(x, vocab);
  kernels::softmax_forward(x, x, 1, vocab, nullptr, 1.0f);
  return static_cast<double>(m) - std::log(static_cast<double>(kernels::max_value(x, vocab)));
}

}  // namespace

LossSums output_loss(ParamStore& params, WeightMatrixId matrix, const float* h, const std::int32_t* targets,
                     std::int64_t rows, std::int64_t d, std::int64_t vocab, float label_smoothing,
                     std::int32_t ignore_id, float grad_scale, float* dh, Arena& scratch) {
  // Gather the rows that have a target, so chunks hold no wasted rows.
  const std::span<std::int64_t> all_rows = thread_scratch<std::int64_t>(static_cast<std::size_t>(rows));
  std::size_t live_rows = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    if (targets[r] != ignore_id) all_rows[live_rows++] = r;
  const std::span<const std::int64_t> live = all_rows.first(live_rows);

  const double eps = label_smoothing;
  const double eps_other = vocab > 1 ? eps / static_cast<double>(vocab - 1) : 0.0;
  const double on_target = 1.0 - eps;
  LossSums sums;
  sums.tokens = static_cast<std::int64_t>(live.size());
  float* hc = scratch.alloc(kChunkRows * d);          // [chunk, d] gathered rows
  float* logits = scratch.alloc(kChunkRows * vocab);  // [chunk, vocab], then their gradient
  float* dhc = scratch.alloc(kChunkRows * d);         // [chunk, d]
  const ParamId weight = params.weight_matrices().at(static_cast<std::size_t>(matrix.index)).param;
  const kernels::WeightForm form = params.form(matrix);

  for (std::size_t c0 = 0; c0 < live.size(); c0 += kChunkRows) {
    const std::int64_t n = std::min<std::int64_t>(kChunkRows, static_cast<std::int64_t>(live.size() - c0));
    for (std::int64_t i = 0; i < n; ++i) std::copy(h + live[c0 + i] * d, h + live[c0 + i] * d + d, hc + i * d);
    kernels::weight_product(form, n, hc, d, 0.0f, logits, vocab);
    // Per-row sums added in row order afterwards: an OpenMP float reduction
    // would combine in arrival order and break bitwise reproducibility.
    const std::span<double> row_loss = thread_scratch<double>(static_cast<std::size_t>(n), 0);
    const std::span<double> row_nll = thread_scratch<double>(static_cast<std::size_t>(n), 1);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      float* x = logits + i * vocab;
      const std::int32_t target = targets[live[c0 + i]];
      const double x_target = x[target];
      const double sum_x = kernels::sum(x, vocab);
      const double lse = softmax_row_lse(x, vocab);
      const double nll = lse - x_target;
      const double row_smooth = static_cast<double>(vocab) * lse - sum_x;  // −Σ_j log p_j
      row_nll[i] = nll;
      row_loss[i] = (on_target - eps_other) * nll + eps_other * row_smooth;
      if (dh) {
        // ∂/∂x_j = p_j − q_j, q = ε/(V−1) everywhere plus (1 − ε − ε/(V−1)) on the target.
        for (std::int64_t j = 0; j < vocab; ++j) x[j] = grad_scale * (x[j] - static_cast<float>(eps_other));
        x[target] -= grad_scale * static_cast<float>(on_target - eps_other);
      }
    }
    for (std::int64_t i = 0; i < n; ++i) {
      sums.loss += row_loss[i];
      sums.nll += row_nll[i];
    }
    if (!dh) continue;
    // dh_chunk = dlogits · W; dW += dlogitsᵀ · h_chunk
    kernels::weight_product_backward(form, n, logits, vocab, 0.0f, dhc, d);
    kernels::gemm(form.type, Trans::T, Trans::N, vocab, d, n, 1.0f, logits, vocab, hc, d, 1.0f, params.grad(weight), d);
    for (std::int64_t i = 0; i < n; ++i) kernels::axpy(1.0f, dhc + i * d, dh + live[c0 + i] * d, d);
  }
  return sums;
}

void output_log_probs(const ParamStore& params, WeightMatrixId matrix, const float* h, float* logprobs,
                      std::int64_t rows, std::int64_t d, std::int64_t vocab) {
  kernels::weight_product(params.form(matrix), rows, h, d, 0.0f, logprobs, vocab);
  // In place, reading each row twice (max, Σ exp) and writing it once, where
  // a copy, a full softmax and a max pass ran before (same translations).
  kernels::log_softmax_forward(logprobs, logprobs, rows, vocab);
}

}  // namespace attn::nn
