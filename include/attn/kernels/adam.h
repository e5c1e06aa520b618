// Adam / AdamW over one flat buffer (all parameters at once).
#pragma once
#include <cstdint>

#include "attn/kernels/kernel_list.h"

namespace attn::kernels {

struct AdamHyper {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.98f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled (AdamW): p -= lr · wd · p
  std::int64_t step = 1;      // 1-based, for bias correction
};

}  // namespace attn::kernels

// X(return type, name, (parameters), (arguments)) per kernel: declared below,
// built per ISA and dispatched at run time (attn/kernels/kernel_list.h).
#define ATTN_ADAM_KERNELS(X)                                                                                           \
  /* param, grad, m, v: [n]. g = grad_scale · grad (e.g. the clipping factor);                                         \
     m = β1 m + (1 − β1) g; v = β2 v + (1 − β2) g²;                                                                    \
     p -= lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + eps) + lr · wd · p. */                                       \
  X(void, adam_update, (float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,   \
                        float grad_scale),                                                                             \
    (param, grad, m, v, n, hyper, grad_scale))

namespace attn::kernels {
ATTN_ADAM_KERNELS(ATTN_DECLARE_KERNEL)
}  // namespace attn::kernels
