// Linear: y = x · Wᵀ + b, with W stored [out, in] as in PyTorch (the twin in
// tools/ loads it unchanged).
#pragma once
#include <cstdint>
#include <string>

#include "attn/nn/param_store.h"

namespace attn::nn {

struct Linear {
  ParamId weight = -1;  // [out, in]
  ParamId bias = -1;    // [out], or -1 for none
  std::int64_t in = 0, out = 0;
  WeightMatrixId matrix;  // the weight as the product reads it

  // A Linear over parameters declared already: `out` rows of `in` from the
  // start of weight (which may run on into the parameters declared after it,
  // as Q, K and V do when multiplied as one [3d, d] projection).
  static Linear over(ParamStore& params, ParamId weight, ParamId bias, std::int64_t in, std::int64_t out);

  // Declares "<name>.weight" (Xavier-uniform) and "<name>.bias" (zeros).
  void declare(ParamStore& params, const std::string& name, std::int64_t in_features, std::int64_t out_features,
               bool with_bias = true);

  // x: [rows, in] → y: [rows, out] (written).
  void forward(const ParamStore& params, const float* x, float* y, std::int64_t rows) const;
  // dy: [rows, out]. Accumulates dW, db, and dx: [rows, in] when dx != nullptr.
  void backward(ParamStore& params, const float* x, const float* dy, float* dx, std::int64_t rows) const;
};

}  // namespace attn::nn
