#include "attn/nn/param_store.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/core/error.h"
#include "attn/kernels/embedding.h"

namespace attn::nn {

using kernels::ComputeType;

ParamId ParamStore::add(std::string name, Shape shape, Init init, float scale, bool weight_decay) {
  if (allocated()) throw std::logic_error("ParamStore::add after allocate: " + name);
  if (by_name_.count(name)) throw std::logic_error("ParamStore: duplicate parameter " + name);
  const ParamId id = static_cast<ParamId>(entries_.size());
  by_name_.emplace(name, id);
  entries_.push_back({std::move(name), shape, total_, init, scale, weight_decay});
  read_in_fp32_.push_back(false);
  total_ += shape.numel();
  return id;
}

WeightMatrixId ParamStore::add_weight_matrix(const WeightMatrix& m) {
  if (allocated()) throw std::logic_error("ParamStore::add_weight_matrix after allocate");
  if (m.param < 0 || m.param >= static_cast<ParamId>(entries_.size()) || m.rows < 0 || m.cols < 0 || m.ld < m.cols ||
      m.first < 0 || (m.rows > 0 && entries_[m.param].offset + m.first + (m.rows - 1) * m.ld + m.cols > total_))
    throw std::logic_error("ParamStore::add_weight_matrix: the matrix runs past the parameters");
  matrices_.push_back(m);
  return {static_cast<int>(matrices_.size() - 1)};
}

void ParamStore::read_in_fp32(ParamId id) { read_in_fp32_.at(static_cast<std::size_t>(id)) = true; }

void ParamStore::allocate() {
  if (allocated()) throw std::logic_error("ParamStore::allocate: allocated already");
  values_ = Tensor::zeros({total_}, Pages::populated);  // written whole by initialize() or a model file
  value_at_.resize(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) value_at_[i] = entries_[i].offset;
  held_floats_ = total_;
  forms_.emplace(kernels::ComputeTypes::training(ComputeType::fp32), Use::training, matrices_.size());
  allocated_ = true;
}

void ParamStore::allocate_for_decoding(ComputeType type, const std::function<bool(const ParamInfo&)>& stored_int8) {
  if (allocated()) throw std::logic_error("ParamStore::allocate_for_decoding: allocated already");
  rows_from_form_.assign(entries_.size(), -1);
  if (type == ComputeType::fp32 || (type == ComputeType::int8 && stored_int8))
    for (std::size_t i = 0; i < matrices_.size(); ++i) {
      const WeightMatrix& m = matrices_[i];
      const ParamInfo& p = entries_[static_cast<std::size_t>(m.param)];
      const bool rows_whole = p.shape.ndim() == 2 && m.first == 0 && m.rows == p.shape[0] && m.cols == p.shape[1] &&
                              m.ld == m.cols && m.cols > 0;
      if (rows_whole && read_in_fp32_[static_cast<std::size_t>(m.param)] &&
          (type == ComputeType::fp32 || stored_int8(p)))
        rows_from_form_[static_cast<std::size_t>(m.param)] = static_cast<int>(i);
    }
  // The floats the products read from a form of their own: a parameter they
  // cover whole needs no FP32 values.
  std::vector<bool> in_form(static_cast<std::size_t>(total_));
  if (!in_form.empty())
    for (const WeightMatrix& m : matrices_)
      for (std::int64_t r = 0, start = entries_[m.param].offset + m.first; r < m.rows; ++r)
        std::fill_n(in_form.begin() + start + r * m.ld, m.cols, true);
  value_at_.assign(entries_.size(), -1);
  held_floats_ = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const ParamInfo& p = entries_[i];
    const auto first = in_form.begin() + (in_form.empty() ? 0 : p.offset);
    const bool covered = !in_form.empty() && std::all_of(first, first + p.shape.numel(), [](bool b) { return b; });
    if (covered && (!read_in_fp32_[i] || rows_from_form_[i] >= 0)) continue;
    value_at_[i] = held_floats_;
    held_floats_ += p.shape.numel();
  }
  values_ = Tensor::zeros({held_floats_}, Pages::populated);  // written whole by the model file
  forms_.emplace(kernels::ComputeTypes::decoding(type), Use::decoding, matrices_.size());
  allocated_ = true;
}

std::int64_t ParamStore::value_offset(ParamId id) const {
  const std::int64_t at = value_at_[static_cast<std::size_t>(id)];
  if (at < 0)
    throw std::logic_error("ParamStore: " + entries_[static_cast<std::size_t>(id)].name +
                           " has no FP32 values here (held in its compute form only); declare it read_in_fp32");
  return at;
}

std::span<float> ParamStore::values() {
  if (!holds_all_values()) throw std::logic_error("ParamStore::values: not every FP32 value is held");
  return values_.span();
}

std::span<const float> ParamStore::values() const {
  if (!holds_all_values()) throw std::logic_error("ParamStore::values: not every FP32 value is held");
  return values_.span();
}

std::span<float> ParamStore::grads() {
  if (grads_.empty() && total_ > 0) grads_ = Tensor::zeros({total_});
  return grads_.span();
}

void ParamStore::zero_grads() {
  if (grads_.empty())
    grads();  // fresh zeros
  else
    grads_.fill(0.0f);
}

float* ParamStore::grad(ParamId id) {
  if (grads_.empty()) throw std::logic_error("ParamStore::grad: no gradients yet (zero_grads() allocates them)");
  return grads_.data() + entries_[id].offset;
}

void ParamStore::initialize(Rng& rng) {
  for (const ParamInfo& p : entries_) {
    float* v = values().data() + p.offset;
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

ParamId ParamStore::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

const float* ParamStore::matrix_values_at(std::size_t i) const {
  const WeightMatrix& m = matrices_.at(i);
  if (holds_all_values()) return values_.data() + entries_[m.param].offset + m.first;
  // Parameters held one after another keep their order, so a matrix running on
  // into the next parameters has its values where all of those are held.
  const std::int64_t end = entries_[m.param].offset + m.first + (m.rows > 0 ? (m.rows - 1) * m.ld + m.cols : 0);
  for (std::size_t p = static_cast<std::size_t>(m.param); p < entries_.size() && entries_[p].offset < end; ++p)
    if (value_at_[p] < 0 || value_at_[p] - value_at_[m.param] != entries_[p].offset - entries_[m.param].offset)
      return nullptr;
  return values_.data() + value_at_[m.param] + m.first;
}

void ParamStore::make_form(WeightMatrixId id, const float* w) {
  const auto i = static_cast<std::size_t>(id.index);
  forms_.value().make(i, matrices_.at(i), w);
}

void ParamStore::set_int8_form(WeightMatrixId id, kernels::QuantizedWeight q) {
  forms_.value().set_int8(static_cast<std::size_t>(id.index), std::move(q));
}

ParamId ParamStore::int8_rows_of(WeightMatrixId id) const {
  if (compute_type() != ComputeType::int8) return -1;
  for (std::size_t p = 0; p < rows_from_form_.size(); ++p)
    if (rows_from_form_[p] == id.index) return static_cast<ParamId>(p);
  return -1;
}

void ParamStore::set_int8_rows(ParamId id, Int8Rows rows) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= rows_from_form_.size() || rows_from_form_[i] < 0)
    throw std::logic_error("ParamStore::set_int8_rows: " + entries_.at(i).name + " is not gathered from int8 rows");
  int8_rows_.insert_or_assign(id, std::move(rows));
}

void ParamStore::gather_rows(ParamId id, const std::int32_t* ids, float* out, std::int64_t tokens, float scale) const {
  const ParamInfo& p = entries_.at(static_cast<std::size_t>(id));
  if (holds_values(id)) {
    kernels::embedding_gather(value(id), ids, out, tokens, p.shape[1], scale);
    return;
  }
  const int matrix = rows_from_form_.empty() ? -1 : rows_from_form_[static_cast<std::size_t>(id)];
  const kernels::WeightForm form =
      matrix >= 0 ? forms().form(static_cast<std::size_t>(matrix), matrices_[static_cast<std::size_t>(matrix)], nullptr)
                  : kernels::WeightForm{compute_type()};
  if (form.rows == p.shape[0] && form.cols == p.shape[1] && kernels::fp32_packed_usable(form)) {
    kernels::gather_fp32_packed_columns(*form.fp32, ids, tokens, scale, out);
    return;
  }
  const auto rows = int8_rows_.find(id);
  if (rows == int8_rows_.end() || form.int8 == nullptr)
    throw std::logic_error("ParamStore::gather_rows: " + p.name + " has neither FP32 values nor rows in a form here");
  rows->second.gather(*form.int8, ids, out, tokens, scale);
}

void ParamStore::make_forms(WeightForms& forms) const {
  // The products read the values, which a store with all of them keeps current.
  if (forms.types().weights == ComputeType::fp32) return;
  if (!holds_all_values()) throw std::logic_error("ParamStore::make_forms: not every FP32 value is held");
  // Matrices are independent: one per thread (int8's conversion was a fifth of loading a model).
  std::vector<std::string> errors(matrices_.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < errors.size(); ++i) {
    try {
      forms.make(i, matrices_[i], matrix_values_at(i));
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (const std::string& error : errors)
    if (!error.empty()) throw Error(error);
}

void ParamStore::set_compute_types(kernels::ComputeTypes types, Use use) {
  if (lent_) throw std::logic_error("ParamStore::set_compute_types while forms are lent");
  WeightForms forms(types, use, matrices_.size());
  make_forms(forms);
  forms_.emplace(std::move(forms));
}

const WeightForms& ParamStore::forms() const {
  if (lent_) return *lent_;
  if (!forms_) throw std::logic_error("ParamStore: no weight forms before allocate()");
  return *forms_;
}

kernels::WeightForm ParamStore::form(WeightMatrixId id) const {
  const auto i = static_cast<std::size_t>(id.index);
  return forms().form(i, matrices_.at(i), matrix_values_at(i));
}

ParamStore::Lend::Lend(ParamStore& params, const WeightForms& forms) : params_(params) {
  if (params.lent_) throw std::logic_error("ParamStore::Lend: forms are lent already");
  params.lent_ = &forms;
}

std::int64_t ParamStore::int8_rows_bytes() const {
  std::int64_t total = 0;
  for (const auto& [id, rows] : int8_rows_) total += rows.bytes();
  return total;
}

ParamStore::Footprint ParamStore::footprint() const {
  return {static_cast<std::int64_t>(held_floats_ * sizeof(float)),
          static_cast<std::int64_t>(grads_.empty() ? 0 : total_ * static_cast<std::int64_t>(sizeof(float))),
          (forms_ ? forms_->bytes() : 0) + int8_rows_bytes()};
}

}  // namespace attn::nn
