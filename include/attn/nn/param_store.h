// ParamStore: every parameter of a model is a named view into one flat float
// buffer, and its gradient the same view into a mirror buffer (after llm.c).
// The optimizer, clipping, checkpoint I/O and a future all-reduce are then one
// loop over one array.
//
// Two phases: layers declare their parameters (add), then allocate() creates
// both buffers and initialize() fills the values. Parameters are laid out in
// declaration order, so parameters declared one after another are contiguous
// (a layer uses that to run Q, K and V as one GEMM).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/core/rng.h"
#include "attn/core/tensor.h"
#include "attn/kernels/products.h"

namespace attn::nn {

enum class Init {
  zeros,
  ones,
  normal,         // N(0, scale²)
  uniform,        // U(−scale, scale)
  xavier_uniform  // U(±sqrt(6 / (fan_in + fan_out))), fans from a 2-D shape [out, in]
};

struct ParamInfo {
  std::string name;  // "enc.2.attn.wq"
  Shape shape;
  std::int64_t offset = 0;  // into the flat buffers, in floats
  Init init = Init::zeros;
  float scale = 0.0f;
  bool weight_decay = true;  // false for biases and norms
};

using ParamId = int;

// A matrix inside a parameter that a layer multiplies its input by (y = x·Wᵀ):
// rows × cols floats, rows ld apart, from `first` floats into the parameter.
// Layers declare theirs with the parameters; the store holds each in the form
// of the model's compute type.
struct WeightMatrix {
  ParamId param = -1;
  std::int64_t rows = 0, cols = 0, ld = 0, first = 0;
};
// Its handle: a type of its own, so a ParamId cannot be passed for it.
struct WeightMatrixId {
  int index = -1;
};

class ParamStore {
 public:
  ParamId add(std::string name, Shape shape, Init init, float scale = 0.0f, bool weight_decay = true);
  void allocate();
  void initialize(Rng& rng);
  bool allocated() const { return !values_.empty(); }

  float* value(ParamId id) { return values_.data() + entries_[id].offset; }
  const float* value(ParamId id) const { return values_.data() + entries_[id].offset; }
  float* grad(ParamId id) { return grads_.data() + entries_[id].offset; }
  std::span<float> values() { return values_.span(); }
  std::span<const float> values() const { return values_.span(); }
  std::span<float> grads() { return grads_.span(); }
  std::span<const float> grads() const { return grads_.span(); }
  void zero_grads();

  const std::vector<ParamInfo>& entries() const { return entries_; }
  const ParamInfo& info(ParamId id) const { return entries_[id]; }
  // -1 when absent.
  ParamId find(const std::string& name) const;
  std::int64_t total_floats() const { return total_; }

  WeightMatrixId add_weight_matrix(const WeightMatrix& matrix);
  // Puts every weight matrix into the form `type` multiplies, once, from the
  // values as they are now (set it again after changing them): bf16 packs,
  // int8 quantizes, fp32 reads the values at each product. `use` training
  // also makes bf16's form for the backward products (dy·W); training_lean
  // does not (each backward product packs W at the call: the same bits, half
  // the forms' memory).
  enum class Use { decoding, training, training_lean };
  void set_compute_type(kernels::ComputeType type, Use use = Use::decoding);
  kernels::ComputeType compute_type() const { return compute_type_; }
  // The type of the products between activations (attention's Q·Kᵀ and P·V,
  // kernels/products.h): the weights' type in training, FP32 in decoding. A
  // decoding step multiplies one query row per head by the caches, where
  // rounding and packing the caches each step costs more than bf16 saves
  // (perf, beam 5: 19% of bf16 decoding went to packing them).
  kernels::ComputeType activation_compute_type() const {
    return use_ == Use::decoding ? kernels::ComputeType::fp32 : compute_type_;
  }
  kernels::WeightForm form(WeightMatrixId id) const;
  const std::vector<WeightMatrix>& weight_matrices() const { return matrices_; }

 private:
  std::vector<ParamInfo> entries_;
  std::unordered_map<std::string, ParamId> by_name_;
  std::int64_t total_ = 0;
  Tensor values_;
  Tensor grads_;
  std::vector<WeightMatrix> matrices_;
  kernels::ComputeType compute_type_ = kernels::ComputeType::fp32;
  Use use_ = Use::decoding;
  std::vector<kernels::QuantizedWeight> quantized_;  // [matrices_] under int8, else empty
  std::vector<kernels::Bf16PackedB> bf16_;           // [matrices_] under bf16, else empty: Wᵀ
  std::vector<kernels::Bf16PackedB> bf16_backward_;  // [matrices_] under bf16 for training, else empty: W
};

}  // namespace attn::nn
