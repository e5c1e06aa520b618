#include "attn/train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "attn/kernels/adam.h"
#include "attn/kernels/elementwise.h"

namespace attn::train {

float inverse_sqrt_lr(const OptimizerOptions& o, std::int64_t update) {
  const double u = static_cast<double>(std::max<std::int64_t>(update, 1));
  if (o.warmup > 0 && u < static_cast<double>(o.warmup))
    return static_cast<float>(o.warmup_init_lr + (o.lr - o.warmup_init_lr) * u / static_cast<double>(o.warmup));
  return static_cast<float>(o.lr * std::sqrt(static_cast<double>(std::max<std::int64_t>(o.warmup, 1)) / u));
}

Adam::Adam(const nn::ParamStore& params, const OptimizerOptions& options)
    : options_(options), m_(Tensor::zeros({params.total_floats()})), v_(Tensor::zeros({params.total_floats()})) {}

Adam::StepInfo Adam::step(nn::ParamStore& params) {
  StepInfo info;
  auto grads = params.grads();
  info.grad_norm = std::sqrt(kernels::sum_squares(grads.data(), static_cast<std::int64_t>(grads.size())));
  float scale = 1.0f;
  if (options_.clip_norm > 0.0f && info.grad_norm > options_.clip_norm)
    scale = static_cast<float>(options_.clip_norm / (info.grad_norm + 1e-6));
  ++updates_;
  info.lr = inverse_sqrt_lr(options_, updates_);
  kernels::AdamHyper hyper{info.lr, options_.beta1, options_.beta2, options_.eps, 0.0f, updates_};
  for (const nn::ParamInfo& p : params.entries()) {
    hyper.weight_decay = p.weight_decay ? options_.weight_decay : 0.0f;
    const std::int64_t n = p.shape.numel();
    kernels::adam_update(params.values().data() + p.offset, grads.data() + p.offset, m_.data() + p.offset,
                         v_.data() + p.offset, n, hyper, scale);
  }
  return info;
}

}  // namespace attn::train
