#include "attn/nn/param_store.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/core/error.h"

namespace attn::nn {

ParamId ParamStore::add(std::string name, Shape shape, Init init, float scale, bool weight_decay) {
  if (allocated()) throw std::logic_error("ParamStore::add after allocate: " + name);
  if (by_name_.count(name)) throw std::logic_error("ParamStore: duplicate parameter " + name);
  const ParamId id = static_cast<ParamId>(entries_.size());
  by_name_.emplace(name, id);
  entries_.push_back({std::move(name), shape, total_, init, scale, weight_decay});
  total_ += shape.numel();
  return id;
}

void ParamStore::allocate() {
  values_ = Tensor::zeros({total_}, Pages::populated);  // written whole by initialize() or a model file
  grads_ = Tensor::zeros({total_});
}

void ParamStore::initialize(Rng& rng) {
  for (const ParamInfo& p : entries_) {
    float* v = values_.data() + p.offset;
    const std::int64_t n = p.shape.numel();
    switch (p.init) {
      case Init::zeros:
        for (std::int64_t i = 0; i < n; ++i) v[i] = 0.0f;
        break;
      case Init::ones:
        for (std::int64_t i = 0; i < n; ++i) v[i] = 1.0f;
        break;
      case Init::normal:
        for (std::int64_t i = 0; i < n; ++i) v[i] = p.scale * rng.normal();
        break;
      case Init::uniform:
        for (std::int64_t i = 0; i < n; ++i) v[i] = p.scale * (2.0f * rng.uniform() - 1.0f);
        break;
      case Init::xavier_uniform: {
        const double fan_out = static_cast<double>(p.shape[0]);
        const double fan_in = static_cast<double>(p.shape.ndim() > 1 ? p.shape[1] : 1);
        const float bound = static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
        for (std::int64_t i = 0; i < n; ++i) v[i] = bound * (2.0f * rng.uniform() - 1.0f);
        break;
      }
    }
  }
}

void ParamStore::zero_grads() { grads_.fill(0.0f); }

ParamId ParamStore::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

WeightMatrixId ParamStore::add_weight_matrix(const WeightMatrix& m) {
  if (m.param < 0 || m.param >= static_cast<ParamId>(entries_.size()) || m.rows < 0 || m.cols < 0 || m.ld < m.cols ||
      m.first < 0 || (m.rows > 0 && entries_[m.param].offset + m.first + (m.rows - 1) * m.ld + m.cols > total_))
    throw std::logic_error("ParamStore::add_weight_matrix: the matrix runs past the parameters");
  matrices_.push_back(m);
  return {static_cast<int>(matrices_.size() - 1)};
}

void ParamStore::set_compute_type(kernels::ComputeType type, Use use) {
  using kernels::ComputeType;
  // Forms of the other low-precision type go; FP32 keeps them hidden (form()
  // shows only the current type's), and the next switch back rebuilds them in
  // their own storage: training switches to bf16 for each update and back to
  // FP32 for the optimizer, and fresh forms were allocated, faulted in and
  // freed at every update.
  if (type == ComputeType::bf16) quantized_.clear();
  if (type == ComputeType::int8) bf16_.clear();
  if (type != ComputeType::fp32 && use != Use::training) bf16_backward_.clear();
  const std::size_t count = matrices_.size();
  if (type == ComputeType::int8) quantized_.resize(count);
  if (type == ComputeType::bf16) bf16_.resize(count);
  if (type == ComputeType::bf16 && use == Use::training) bf16_backward_.resize(count);
  // Matrices are independent: one per thread (int8's conversion was a fifth of loading a model).
  std::vector<std::string> errors(type == ComputeType::fp32 ? 0 : count);
#pragma omp parallel for schedule(dynamic, 1) if (type != ComputeType::fp32)
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const WeightMatrix& m = matrices_[i];
    const float* w = value(m.param) + m.first;  // [rows, ld]
    try {
      if (type == ComputeType::int8) quantized_[i] = kernels::quantize_weight(w, m.ld, m.rows, m.cols);
      if (type == ComputeType::bf16) kernels::pack_bf16_b_into(w, m.ld, 1, m.rows, m.cols, bf16_[i]);
      if (type == ComputeType::bf16 && use == Use::training)
        kernels::pack_bf16_b_into(w, 1, m.ld, m.cols, m.rows, bf16_backward_[i]);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (const std::string& error : errors)
    if (!error.empty()) {
      quantized_.clear();
      bf16_.clear();
      bf16_backward_.clear();
      throw Error(error);
    }
  compute_type_ = type;
  use_ = use;
}

kernels::WeightForm ParamStore::form(WeightMatrixId id) const {
  const auto i = static_cast<std::size_t>(id.index);
  const WeightMatrix& m = matrices_.at(i);
  kernels::WeightForm f{compute_type_, value(m.param) + m.first, m.rows, m.cols, m.ld};
  if (compute_type_ == kernels::ComputeType::int8) f.int8 = &quantized_[i];
  if (compute_type_ == kernels::ComputeType::bf16) f.bf16 = &bf16_[i];
  if (compute_type_ == kernels::ComputeType::bf16 && use_ == Use::training) f.bf16_backward = &bf16_backward_[i];
  return f;
}

}  // namespace attn::nn
