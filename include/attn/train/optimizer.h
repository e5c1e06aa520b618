// Adam/AdamW over the ParamStore's flat buffers, with gradient clipping by
// global norm and the inverse-square-root schedule with linear warm-up.
#pragma once
#include <cstdint>

#include "attn/core/tensor.h"
#include "attn/nn/param_store.h"

namespace attn::train {

struct OptimizerOptions {
  float lr = 1e-3f;           // peak learning rate, reached after warmup updates
  std::int64_t warmup = 400;  // linear warm-up from warmup_init_lr (small corpora: a few epochs)
  float warmup_init_lr = 1e-7f;
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled; never applied to biases and norms
  float clip_norm = 0.0f;     // 0: no clipping
};

// fairseq's inverse_sqrt: linear warm-up, then lr · sqrt(warmup / update).
float inverse_sqrt_lr(const OptimizerOptions& options, std::int64_t update);

class Adam {
 public:
  Adam(const nn::ParamStore& params, const OptimizerOptions& options);

  struct StepInfo {
    double grad_norm = 0.0;  // before clipping
    float lr = 0.0f;
  };
  // One update from the gradients in params.grads() (already averaged).
  StepInfo step(nn::ParamStore& params);

  std::int64_t updates() const { return updates_; }
  void set_updates(std::int64_t n) { updates_ = n; }
  Tensor& first_moment() { return m_; }
  Tensor& second_moment() { return v_; }
  const Tensor& first_moment() const { return m_; }
  const Tensor& second_moment() const { return v_; }
  const OptimizerOptions& options() const { return options_; }

 private:
  OptimizerOptions options_;
  Tensor m_, v_;  // mirror the flat parameter buffer
  std::int64_t updates_ = 0;
};

}  // namespace attn::train
