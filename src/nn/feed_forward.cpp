#include "attn/nn/feed_forward.h"

#include <cstring>

#include "attn/kernels/activation.h"

namespace attn::nn {

using kernels::Activation;

void FeedForward::declare(ParamStore& params, const std::string& name, std::int64_t d, std::int64_t ffn_dim) {
  fc1.declare(params, name + ".fc1", d, ffn_dim);
  fc2.declare(params, name + ".fc2", ffn_dim, d);
}

FeedForward::Saved FeedForward::forward(StepContext& ctx, const float* x, float* y, std::int64_t rows) const {
  const std::int64_t f = fc1.out;
  Saved s{x, ctx.arena.alloc(rows * f), {}, rows};
  fc1.forward(ctx.params, x, s.hidden, rows);
  kernels::activation_forward(Activation::relu, s.hidden, s.hidden, rows * f);
  s.drop = activation_dropout.forward(ctx, s.hidden, rows * f);
  fc2.forward(ctx.params, s.hidden, y, rows);
  return s;
}

void FeedForward::backward(StepContext& ctx, const Saved& s, const float* dy, float* dx) const {
  const std::int64_t f = fc1.out;
  float* dhidden = ctx.arena.alloc_zeroed(s.rows * f);
  fc2.backward(ctx.params, s.hidden, dy, dhidden, s.rows);
  activation_dropout.backward(s.drop, dhidden, dhidden);
  float* dpre = ctx.arena.alloc_zeroed(s.rows * f);
  // ReLU′ from ReLU's output: hidden > 0 exactly where fc1's output was, but
  // where dropout zeroed it, where dhidden is zero already. Saves [rows, ffn].
  kernels::activation_backward(Activation::relu, s.hidden, dhidden, dpre, s.rows * f);
  fc1.backward(ctx.params, s.x, dpre, dx, s.rows);
}

}  // namespace attn::nn
