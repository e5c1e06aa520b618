#include "attn/nn/layer_norm.h"

#include "attn/kernels/layernorm.h"

namespace attn::nn {

void LayerNorm::declare(ParamStore& params, const std::string& name, std::int64_t dim) {
  d = dim;
  gamma = params.add(name + ".weight", {d}, Init::ones, 0.0f, false);
  beta = params.add(name + ".bias", {d}, Init::zeros, 0.0f, false);
}

LayerNorm::Saved LayerNorm::forward(StepContext& ctx, const float* x, float* y, std::int64_t rows) const {
  Saved s{x, ctx.arena.alloc(rows), ctx.arena.alloc(rows), rows};
  kernels::layernorm_forward(x, ctx.params.value(gamma), ctx.params.value(beta), y, s.mean, s.rstd, rows, d, eps);
  return s;
}

void LayerNorm::backward(StepContext& ctx, const Saved& s, const float* dy, float* dx) const {
  kernels::layernorm_backward(dy, s.x, ctx.params.value(gamma), s.mean, s.rstd, dx, ctx.params.grad(gamma),
                              ctx.params.grad(beta), s.rows, d);
}

}  // namespace attn::nn
