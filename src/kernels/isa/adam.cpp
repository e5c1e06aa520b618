// AdamW over one flat buffer: a streaming loop, split across threads.
#include "isa.h"

#include <cmath>

#include "attn/kernels/adam.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {
#include "adam.inc"

namespace {
constexpr std::int64_t kParallelMin = 1 << 15;  // elements; below this, threads cost more than they give
}  // namespace

void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale) {
  const double step = static_cast<double>(hyper.step);
  const float beta1 = hyper.beta1, beta2 = hyper.beta2, eps = hyper.eps;
  // Bias corrections folded into the two factors the loop needs.
  const float m_factor = static_cast<float>(hyper.lr / (1.0 - std::pow(static_cast<double>(beta1), step)));
  const float v_factor = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta2), step)));
  const float decay = hyper.lr * hyper.weight_decay;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = grad_scale * grad[i];
    const float m_new = beta1 * m[i] + (1.0f - beta1) * g;
    const float v_new = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = m_new;
    v[i] = v_new;
    param[i] -= m_factor * m_new / (std::sqrt(v_new * v_factor) + eps) + decay * param[i];
  }
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
