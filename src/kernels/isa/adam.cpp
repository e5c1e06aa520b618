// AdamW over one flat buffer: a streaming loop, split across threads.
#include "isa.h"

#include <algorithm>
#include <cmath>

#include "kernels.h"
#include "attn/kernels/adam.h"
#include "parallel_for.h"
#include "vec_math.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace {
constexpr std::int64_t kChunk = 1 << 14;  // elements per unit of parallel work

struct Factors {
  float beta1, beta2, eps;
  float m_factor;  // lr / (1 − β1^t)
  float v_factor;  // 1 / (1 − β2^t)
  float decay;     // lr · wd
  float grad_scale;
};

// param, grad, m, v: [n]. Explicit vectors, so that the square root is the
// packed instruction (GCC will not vectorise std::sqrt under -fmath-errno);
// the tail uses std::sqrt, which rounds the same.
void adam_range(float* param, const float* grad, float* m, float* v, std::int64_t n, const Factors& f) {
  using vec_math::load;
  using vec_math::splat;
  using vec_math::store;
  using vec_math::Vec;
  const Vec grad_scale = splat(f.grad_scale), beta1 = splat(f.beta1), beta2 = splat(f.beta2);
  const Vec one_minus_beta1 = splat(1.0f - f.beta1), one_minus_beta2 = splat(1.0f - f.beta2);
  const Vec m_factor = splat(f.m_factor), v_factor = splat(f.v_factor), eps = splat(f.eps), decay = splat(f.decay);
  std::int64_t i = 0;
  for (; i + vec_math::kWidth <= n; i += vec_math::kWidth) {
    const Vec g = grad_scale * load(grad + i);
    const Vec m_new = beta1 * load(m + i) + one_minus_beta1 * g;
    const Vec v_new = beta2 * load(v + i) + one_minus_beta2 * g * g;
    store(m + i, m_new);
    store(v + i, v_new);
    const Vec p = load(param + i);
    store(param + i, p - (m_factor * m_new / (vec_math::sqrt(v_new * v_factor) + eps) + decay * p));
  }
  for (; i < n; ++i) {
    const float g = f.grad_scale * grad[i];
    m[i] = f.beta1 * m[i] + (1.0f - f.beta1) * g;
    v[i] = f.beta2 * v[i] + (1.0f - f.beta2) * g * g;
    param[i] -= f.m_factor * m[i] / (std::sqrt(v[i] * f.v_factor) + f.eps) + f.decay * param[i];
  }
}
}  // namespace

void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale) {
  const double step = static_cast<double>(hyper.step);
  const Factors factors{
      hyper.beta1,
      hyper.beta2,
      hyper.eps,
      static_cast<float>(hyper.lr / (1.0 - std::pow(static_cast<double>(hyper.beta1), step))),
      static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(hyper.beta2), step))),
      hyper.lr * hyper.weight_decay,
      grad_scale,
  };
  parallel_chunks(n, kChunk, [&](std::int64_t begin, std::int64_t end) {
    adam_range(param + begin, grad + begin, m + begin, v + begin, end - begin, factors);
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
