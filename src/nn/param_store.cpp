#include "attn/nn/param_store.h"

#include <cmath>
#include <stdexcept>

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
  values_ = Tensor::zeros({total_});
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

}  // namespace attn::nn
