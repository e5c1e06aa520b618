// Adam / AdamW over one flat buffer (all parameters at once). Built per ISA
// and picked at run time (src/kernels/kernel_table.h).
#pragma once
#include <cstdint>

namespace attn::kernels {

struct AdamHyper {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.98f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled (AdamW): p -= lr · wd · p
  std::int64_t step = 1;      // 1-based, for bias correction
};

// param, grad, m, v: [n], none aliasing another. g = grad_scale · grad (e.g.
// the clipping factor); m = β1 m + (1 − β1) g; v = β2 v + (1 − β2) g²;
// p -= lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + eps) + lr · wd · p.
// Elementwise, so the result is the same for any thread count (OpenMP over
// chunks above ~16k elements, serial inside a parallel region).
void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale);

}  // namespace attn::kernels
