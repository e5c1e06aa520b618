#include "attn/nn/weight_forms.h"

#include <stdexcept>

namespace attn::nn {

using kernels::ComputeType;

WeightForms::WeightForms(kernels::ComputeTypes types, Use use, std::size_t matrices) : types_(types), use_(use) {
  if (types.weights == ComputeType::fp32 && use == Use::decoding) fp32_.resize(matrices);
  if (types.weights == ComputeType::int8) int8_.resize(matrices);
  if (types.weights == ComputeType::bf16) bf16_.resize(matrices);
  if (types.weights == ComputeType::bf16 && use == Use::training) bf16_backward_.resize(matrices);
}

void WeightForms::make(std::size_t i, const WeightMatrix& m, const float* w) {
  if (!fp32_.empty()) fp32_.at(i) = kernels::pack_fp32_b(w, m.ld, 1, m.rows, m.cols);
  if (types_.weights == ComputeType::int8) int8_.at(i) = kernels::quantize_weight(w, m.ld, m.rows, m.cols);
  if (types_.weights == ComputeType::bf16) kernels::pack_bf16_b_into(w, m.ld, 1, m.rows, m.cols, bf16_.at(i));
  if (!bf16_backward_.empty()) kernels::pack_bf16_b_into(w, 1, m.ld, m.cols, m.rows, bf16_backward_.at(i));
}

void WeightForms::set_int8(std::size_t i, kernels::QuantizedWeight q) {
  if (types_.weights != ComputeType::int8) throw std::logic_error("WeightForms::set_int8: the forms are not int8");
  int8_.at(i) = std::move(q);
}

kernels::WeightForm WeightForms::form(std::size_t i, const WeightMatrix& m, const float* values) const {
  kernels::WeightForm f{types_.weights, values, m.rows, m.cols, m.ld};
  if (!fp32_.empty()) f.fp32 = &fp32_[i];
  if (!int8_.empty()) f.int8 = &int8_[i];
  if (!bf16_.empty()) f.bf16 = &bf16_[i];
  if (!bf16_backward_.empty()) f.bf16_backward = &bf16_backward_[i];
  return f;
}

std::int64_t WeightForms::bytes() const {
  std::size_t total = 0;
  for (const kernels::Fp32PackedB& b : fp32_) total += b.values.size() * sizeof(float);
  for (const kernels::QuantizedWeight& q : int8_)
    total += q.packed.size() + (q.scales.size() + q.sums.size()) * sizeof(float);
  for (const auto* forms : {&bf16_, &bf16_backward_})
    for (const kernels::Bf16PackedB& b : *forms) total += b.pairs.size() * sizeof(std::uint32_t);
  return static_cast<std::int64_t>(total);
}

}  // namespace attn::nn
