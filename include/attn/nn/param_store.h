// ParamStore: every parameter of a model is a named view into one flat float
// buffer, and its gradient the same view into a mirror buffer (after llm.c).
// The optimizer, clipping, checkpoint I/O and a future all-reduce are then one
// loop over one array.
//
// Two phases: layers declare their parameters (add) and weight matrices
// (add_weight_matrix), then the store gets its storage in one of two ways:
//   allocate()  the FP32 values of every parameter, laid out in declaration
//               order, so parameters declared one after another are
//               contiguous (a layer uses that to run Q, K and V as one GEMM);
//               initialize() or a model file fills them. Training, and any
//               model built in the process.
//   allocate_for_decoding(type)  a model file loaded for decoding: FP32
//               values only where the products do not hold the weights in
//               another form (model/model_file.cpp fills values and forms),
//               and under int8 none for an int8 file's tied embedding table,
//               gathered from its output projection's int8 form (Int8Rows).
// Gradients come when backward first needs them (zero_grads, grads()), as
// llm.c allocates them at its first backward: decoding never has any.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/core/rng.h"
#include "attn/core/tensor.h"
#include "attn/kernels/products.h"
#include "attn/nn/int8_rows.h"
#include "attn/nn/weight_forms.h"

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

class ParamStore {
 public:
  using Use = WeightForms::Use;

  ParamId add(std::string name, Shape shape, Init init, float scale = 0.0f, bool weight_decay = true);
  WeightMatrixId add_weight_matrix(const WeightMatrix& matrix);
  // A parameter a layer reads in FP32 although weight matrices cover it (a
  // tied embedding's table, gathered by the embedding and multiplied by the
  // output projection): a model loaded for decoding keeps its values.
  void read_in_fp32(ParamId id);

  // Every parameter's FP32 values (zeros), and FP32 forms.
  void allocate();
  void initialize(Rng& rng);
  bool allocated() const { return allocated_; }

  // For a model loaded for decoding in `type`: FP32 values of the parameters
  // the products do not cover and of those read_in_fp32; the weight matrices
  // in `type`'s forms (ComputeTypes::decoding), each made by make_form or
  // set_int8_form before the first product. The FP32 values of a matrix held
  // in a form are never allocated. A parameter read_in_fp32 whose rows are a
  // weight matrix's rows whole (a tied embedding table) gets none either
  // under fp32 — gather_rows reads its rows from the matrix's packed form, the
  // same floats — and under int8 when the file holds it in int8
  // (stored_int8): gather_rows reads its rows from the matrix's int8 form and
  // the file's scales (set_int8_rows), the same values.
  void allocate_for_decoding(kernels::ComputeType type, const std::function<bool(const ParamInfo&)>& stored_int8 = {});
  // Whether parameter id has FP32 values here (always after allocate()).
  bool holds_values(ParamId id) const { return value_at_[static_cast<std::size_t>(id)] >= 0; }
  bool holds_all_values() const { return allocated_ && held_floats_ == total_; }
  // Matrix id's FP32 values [rows, ld], or null where the store holds none.
  const float* matrix_values(WeightMatrixId id) const { return matrix_values_at(static_cast<std::size_t>(id.index)); }
  // Matrix id's form made from its FP32 values w: [rows, ld].
  void make_form(WeightMatrixId id, const float* w);
  // Matrix id's int8 form, quantized already (under int8 only).
  void set_int8_form(WeightMatrixId id, kernels::QuantizedWeight q);
  // The parameter whose rows are gathered from matrix id's int8 form (with the
  // rows set_int8_rows sets), or -1; under fp32 always -1.
  ParamId int8_rows_of(WeightMatrixId id) const;
  // Its file's scales and the rows the form re-quantized (set with the form).
  void set_int8_rows(ParamId id, Int8Rows rows);

  // out[t, :] = scale · row ids[t] of parameter id (a [rows, k] table, rows
  // and k its shape's), from its FP32 values, its matrix's packed FP32 form or
  // its int8 rows. out: [tokens, k].
  void gather_rows(ParamId id, const std::int32_t* ids, float* out, std::int64_t tokens, float scale) const;

  // A parameter's FP32 values; std::logic_error where none are held.
  float* value(ParamId id) { return values_.data() + value_offset(id); }
  const float* value(ParamId id) const { return values_.data() + value_offset(id); }
  // Every value in ParamInfo::offset order; std::logic_error unless holds_all_values().
  std::span<float> values();
  std::span<const float> values() const;

  // Allocated (zeros) at the first call of either.
  std::span<float> grads();
  void zero_grads();
  // Empty before then.
  std::span<const float> grads() const { return grads_.span(); }
  // std::logic_error before grads() or zero_grads() allocated them.
  float* grad(ParamId id);

  const std::vector<ParamInfo>& entries() const { return entries_; }
  const ParamInfo& info(ParamId id) const { return entries_[id]; }
  // -1 when absent.
  ParamId find(const std::string& name) const;
  std::int64_t total_floats() const { return total_; }
  const std::vector<WeightMatrix>& weight_matrices() const { return matrices_; }

  // Puts every weight matrix into the forms of `types`, once, from the values
  // as they are now (set them again after changing them). Needs every FP32
  // value (a store from allocate()): to compare compute types on one model.
  void set_compute_types(kernels::ComputeTypes types, Use use);
  // The type of the weight products, and of the products between activations
  // (kernels/products.h), of the forms the layers multiply by now.
  kernels::ComputeType compute_type() const { return forms().types().weights; }
  kernels::ComputeType activation_compute_type() const { return forms().types().activations; }
  kernels::WeightForm form(WeightMatrixId id) const;
  // Makes every matrix's form in `forms` (a training session's own) from the
  // values as they are now; one matrix per thread.
  void make_forms(WeightForms& forms) const;

  // For its lifetime, the layers multiply by `forms` (made by make_forms)
  // instead of the store's own, which stay as they are: a bf16 training
  // step's forms belong to the trainer, which makes them again after each
  // update; validation between updates multiplies by the store's FP32 ones.
  class Lend {
   public:
    Lend(ParamStore& params, const WeightForms& forms);
    ~Lend() { params_.lent_ = nullptr; }
    Lend(const Lend&) = delete;
    Lend& operator=(const Lend&) = delete;

   private:
    ParamStore& params_;
  };

  // Bytes held, per form of the parameters: what a test of "a model loaded
  // for decoding holds no gradients and no FP32 copy" reads.
  struct Footprint {
    std::int64_t fp32_values = 0, gradients = 0, forms = 0;
  };
  Footprint footprint() const;

 private:
  std::int64_t value_offset(ParamId id) const;
  const WeightForms& forms() const;
  std::int64_t int8_rows_bytes() const;
  // Matrix i's FP32 values, or null where its parameters hold none.
  const float* matrix_values_at(std::size_t i) const;

  std::vector<ParamInfo> entries_;
  std::unordered_map<std::string, ParamId> by_name_;
  std::vector<bool> read_in_fp32_;  // [entries_]
  std::int64_t total_ = 0;
  bool allocated_ = false;
  std::vector<std::int64_t> value_at_;  // [entries_]: offset into values_, −1 where none is held
  std::int64_t held_floats_ = 0;
  Tensor values_;
  Tensor grads_;
  std::vector<WeightMatrix> matrices_;
  std::vector<int> rows_from_form_;  // [entries_]: the matrix whose form gather_rows reads, −1 where none
  std::unordered_map<ParamId, Int8Rows> int8_rows_;  // of those, as set_int8_rows set them
  std::optional<WeightForms> forms_;                 // the store's own, from allocate() or allocate_for_decoding()
  const WeightForms* lent_ = nullptr;
};

}  // namespace attn::nn
