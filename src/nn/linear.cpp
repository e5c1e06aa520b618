#include "attn/nn/linear.h"

#include "attn/kernels/elementwise.h"
#include "attn/kernels/products.h"

namespace attn::nn {

using kernels::Trans;

void Linear::declare(ParamStore& params, const std::string& name, std::int64_t in_features, std::int64_t out_features,
                     bool with_bias) {
  in = in_features;
  out = out_features;
  weight = params.add(name + ".weight", {out, in}, Init::xavier_uniform);
  bias = with_bias ? params.add(name + ".bias", {out}, Init::zeros, 0.0f, false) : -1;
  matrix = params.add_weight_matrix({weight, out, in, in});
}

Linear Linear::over(ParamStore& params, ParamId weight, ParamId bias, std::int64_t in, std::int64_t out) {
  Linear l{weight, bias, in, out, {}};
  l.matrix = params.add_weight_matrix({weight, out, in, in});
  return l;
}

void Linear::forward(const ParamStore& params, const float* x, float* y, std::int64_t rows) const {
  kernels::weight_product(params.form(matrix), rows, x, in, 0.0f, y, out);
  if (bias >= 0) kernels::add_row_vector(y, params.value(bias), rows, out);
}

void Linear::backward(ParamStore& params, const float* x, const float* dy, float* dx, std::int64_t rows) const {
  if (dx) kernels::weight_product_backward(params.form(matrix), rows, dy, out, 1.0f, dx, in);
  kernels::gemm(params.activation_compute_type(), Trans::T, Trans::N, out, in, rows, 1.0f, dy, out, x, in, 1.0f,
                params.grad(weight), in);
  if (bias >= 0) kernels::sum_rows(dy, params.grad(bias), rows, out);
}

}  // namespace attn::nn
