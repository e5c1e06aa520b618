// The weight matrices of a model as its products read them: WeightMatrix says
// where a matrix lies in the parameters, WeightForms holds the matrices in the
// form one compute type multiplies (kernels::WeightForm), made from their FP32
// values once. A model loaded for decoding holds one set in its ParamStore;
// bf16 training holds its own beside the FP32 master weights and makes it
// again after each update (train/trainer.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/kernels/products.h"

namespace attn::nn {

using ParamId = int;

// A matrix inside a parameter that a layer multiplies its input by (y = x·Wᵀ):
// rows × cols floats, rows ld apart, from `first` floats into the parameter
// (it may run on into the parameters declared after it, as Q, K and V do).
struct WeightMatrix {
  ParamId param = -1;
  std::int64_t rows = 0, cols = 0, ld = 0, first = 0;
};
// Its handle: a type of its own, so a ParamId cannot be passed for it.
struct WeightMatrixId {
  int index = -1;
};

class WeightForms {
 public:
  // decoding: the forward's forms. training: also bf16's form for the
  // backward products (dy·W). training_lean: not that one; each backward
  // product packs W at the call (the same bits, half the forms' memory).
  enum class Use { decoding, training, training_lean };

  // Forms of `matrices` weight matrices in types.weights, not made yet. Under
  // fp32 they are made for decoding only (Wᵀ packed); training's products
  // read the values.
  WeightForms(kernels::ComputeTypes types, Use use, std::size_t matrices);

  kernels::ComputeTypes types() const { return types_; }
  Use use() const { return use_; }
  // Makes matrix i's form from w: [m.rows, m.ld] (in the storage of the form
  // made before, when there was one: training makes them at every update).
  void make(std::size_t i, const WeightMatrix& m, const float* w);
  // Matrix i's int8 form, quantized already (an int8 model file's weights).
  void set_int8(std::size_t i, kernels::QuantizedWeight q);
  // Matrix i in its form; `values` its FP32 values, or null where none are held.
  kernels::WeightForm form(std::size_t i, const WeightMatrix& m, const float* values) const;
  // Bytes of the forms' storage.
  std::int64_t bytes() const;

 private:
  kernels::ComputeTypes types_;
  Use use_;
  std::vector<kernels::Fp32PackedB> fp32_;           // [matrices] under fp32 for decoding, else empty: Wᵀ
  std::vector<kernels::QuantizedWeight> int8_;       // [matrices] under int8, else empty
  std::vector<kernels::Bf16PackedB> bf16_;           // [matrices] under bf16, else empty: Wᵀ
  std::vector<kernels::Bf16PackedB> bf16_backward_;  // [matrices] under bf16 for training, else empty: W
};

}  // namespace attn::nn
