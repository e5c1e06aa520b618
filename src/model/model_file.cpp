#include "attn/model/model_file.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include "attn/core/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm_int8.h"

namespace attn::model {

namespace {

std::string scale_name(const std::string& param) { return param + ".scale"; }

// A [d0, …, k] weight as rows of its last dimension: d0·…·d_{n−2} rows of k.
struct WeightRows {
  std::int64_t count, k;
};
WeightRows weight_rows(const Shape& shape) {
  const std::int64_t k = shape[shape.ndim() - 1];
  return {k > 0 ? shape.numel() / k : 0, k};
}

// A weight matrix in int8, row by row, and its rows' scales.
struct Int8Weight {
  std::vector<std::int8_t> values;
  std::vector<float> scales;
};

Int8Weight quantize_param(std::span<const float> w, const nn::ParamInfo& p) {
  const auto [rows, k] = weight_rows(p.shape);
  Int8Weight q{std::vector<std::int8_t>(w.size()), std::vector<float>(static_cast<std::size_t>(rows))};
  for (std::int64_t r = 0; r < rows; ++r)
    q.scales[static_cast<std::size_t>(r)] = kernels::quantize_row(w.data() + r * k, k, q.values.data() + r * k);
  return q;
}

// Reads a model file's parameters for the store, checking each as it goes:
// FP32 as stored, int8 ones (attn quantize) as their int8 rows and scales or
// dequantized (q·scale) to FP32.
class ParamReader {
 public:
  explicit ParamReader(const SafetensorsFile& file) : file_(file) {}

  bool stored_int8(const nn::ParamInfo& p) const { return file_.contains(p.name) && file_.dtype(p.name) == DType::I8; }

  // values: [p.shape.numel()].
  void read(const nn::ParamInfo& p, std::span<float> values) const {
    if (!stored_int8(p)) {
      file_.copy_to(p.name, p.shape, values);
    } else {
      const Int8Weight q = read_int8(p);
      const auto [rows, k] = weight_rows(p.shape);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < k; ++c)
          values[static_cast<std::size_t>(r * k + c)] =
              static_cast<float>(q.values[static_cast<std::size_t>(r * k + c)]) * q.scales[static_cast<std::size_t>(r)];
    }
    // Valid checksums do not make valid weights: a NaN model would translate every line to nothing.
    if (!kernels::all_finite(values.data(), static_cast<std::int64_t>(values.size())))
      throw Error(file_.path().string() +
                  ": holds weights that are NaN or infinite (a diverged or damaged model); it cannot be used");
  }

  // The int8 parameter p and its "<name>.scale", checked.
  Int8Weight read_int8(const nn::ParamInfo& p) const {
    const auto [rows, k] = weight_rows(p.shape);
    Int8Weight q{std::vector<std::int8_t>(static_cast<std::size_t>(p.shape.numel())),
                 std::vector<float>(static_cast<std::size_t>(rows))};
    read_int8(p, q.values, q.scales);
    return q;
  }
  // The same into values: [p.shape.numel()] and scales: [its rows].
  void read_int8(const nn::ParamInfo& p, std::span<std::int8_t> values, std::span<float> scales) const {
    const std::string where = file_.path().string() + ": int8 tensor '" + p.name + "'";
    if (!(file_.shape(p.name) == p.shape))
      throw Error(where + " has shape " + file_.shape(p.name).str() + " but " + p.shape.str() +
                  " is expected; was it written for another model configuration?");
    if (!stored_in_int8(p)) throw Error(where + ": attn stores this parameter in FP32 only; the file is inconsistent");
    const std::string scales_name = scale_name(p.name);
    if (!file_.contains(scales_name)) throw Error(where + " has no '" + scales_name + "'; the file is incomplete");
    file_.copy_to(scales_name, Shape{weight_rows(p.shape).count}, scales);
    for (const float s : scales)
      if (!std::isfinite(s) || s < 0.0f)
        throw Error(where + " has a scale that is negative or not finite; the file is damaged");
    file_.copy_int8_to(p.name, p.shape, values);
  }

 private:
  const SafetensorsFile& file_;
};

// The parameters a weight matrix lies in: [first, last], and its start in floats from first's.
struct MatrixSpan {
  std::size_t first, last;
  std::int64_t start, floats;  // from the first parameter's offset; floats: through the last parameter's end
};
MatrixSpan matrix_span(const std::vector<nn::ParamInfo>& params, const nn::WeightMatrix& m) {
  const std::int64_t begin = params[static_cast<std::size_t>(m.param)].offset + m.first;
  const std::int64_t end = begin + (m.rows > 0 ? (m.rows - 1) * m.ld + m.cols : 0);
  auto last = static_cast<std::size_t>(m.param);
  while (last + 1 < params.size() && params[last + 1].offset < end) ++last;
  const std::int64_t base = params[static_cast<std::size_t>(m.param)].offset;
  return {static_cast<std::size_t>(m.param), last, begin - base,
          params[last].offset + params[last].shape.numel() - base};
}

// A matrix whose rows are whole rows of int8 parameters of the file: its int8
// form is made from them directly. Each row keeps its int8 values, and its
// scale becomes the one quantize_row gives the dequantized row (max|q·s|/127,
// almost always s itself), so the form is bitwise the one quantizing the
// dequantized weights gives, as loading did before. A row whose values would
// not come back unchanged (largest |q| not 127, a subnormal scale) is
// quantized from its dequantized values instead. `rows`, when given, gets the
// file's scales and those rows' dequantized values: what gathering the
// matrix's rows from the form needs to give the file's values (nn::Int8Rows).
std::optional<kernels::QuantizedWeight> int8_form(const ParamReader& reader, const std::vector<nn::ParamInfo>& params,
                                                  const nn::WeightMatrix& m, nn::Int8Rows* rows_out = nullptr) {
  const MatrixSpan span = matrix_span(params, m);
  if (m.ld != m.cols || m.cols == 0 || span.start % m.cols != 0) return std::nullopt;
  for (std::size_t p = span.first; p <= span.last; ++p)
    if (!reader.stored_int8(params[p]) || weight_rows(params[p].shape).k != m.cols) return std::nullopt;
  std::vector<std::int8_t> q(static_cast<std::size_t>(span.floats));
  std::vector<float> scales(static_cast<std::size_t>(span.floats / m.cols));
  for (std::size_t p = span.first; p <= span.last; ++p) {
    const std::int64_t at = params[p].offset - params[span.first].offset;
    reader.read_int8(params[p],
                     std::span(q).subspan(static_cast<std::size_t>(at),
                                          static_cast<std::size_t>(params[p].shape.numel())),
                     std::span(scales).subspan(static_cast<std::size_t>(at / m.cols),
                                               static_cast<std::size_t>(weight_rows(params[p].shape).count)));
  }
  std::int8_t* rows = q.data() + span.start;  // [m.rows, m.cols]
  float* row_scales = scales.data() + span.start / m.cols;
  if (rows_out) rows_out->scales.assign(row_scales, row_scales + m.rows);
  std::vector<float> dequantized(static_cast<std::size_t>(m.cols));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    std::int8_t* row = rows + r * m.cols;
    const float s = row_scales[r];
    int largest = 0;
    for (std::int64_t c = 0; c < m.cols; ++c) largest = std::max(largest, std::abs(static_cast<int>(row[c])));
    const float amax = static_cast<float>(largest) * s;
    if (largest == 0 || (largest == 127 && s >= std::numeric_limits<float>::min() && std::isfinite(amax))) {
      row_scales[r] = amax / 127.0f;
      continue;
    }
    for (std::int64_t c = 0; c < m.cols; ++c) dequantized[static_cast<std::size_t>(c)] = static_cast<float>(row[c]) * s;
    if (rows_out) rows_out->fp32_rows.emplace(r, dequantized);
    row_scales[r] = kernels::quantize_row(dequantized.data(), m.cols, row);
  }
  return kernels::pack_quantized_weight(rows, m.cols, row_scales, m.rows, m.cols);
}

// Matrix i's form in the store's compute type, from the values the store
// holds, from the file's int8 rows, or from its parameters read into a buffer
// that goes when the form is made.
void make_form(const ParamReader& reader, nn::ParamStore& store, std::size_t i) {
  const nn::WeightMatrix& m = store.weight_matrices()[i];
  const nn::WeightMatrixId id{static_cast<int>(i)};
  if (const float* held = store.matrix_values(id)) {
    store.make_form(id, held);
    return;
  }
  const nn::ParamId gathered = store.int8_rows_of(id);
  if (store.compute_type() == ComputeType::int8) {
    nn::Int8Rows rows;
    if (std::optional<kernels::QuantizedWeight> q =
            int8_form(reader, store.entries(), m, gathered >= 0 ? &rows : nullptr)) {
      store.set_int8_form(id, std::move(*q));
      if (gathered >= 0) store.set_int8_rows(gathered, std::move(rows));
      return;
    }
  }
  if (gathered >= 0)
    throw std::logic_error("load_model_file: " + store.entries()[static_cast<std::size_t>(gathered)].name +
                           " is gathered from int8 rows the file does not hold");
  const MatrixSpan span = matrix_span(store.entries(), m);
  std::vector<float> values(static_cast<std::size_t>(span.floats));
  for (std::size_t p = span.first; p <= span.last; ++p) {
    const nn::ParamInfo& info = store.entries()[p];
    reader.read(info,
                std::span(values).subspan(static_cast<std::size_t>(info.offset - store.entries()[span.first].offset),
                                          static_cast<std::size_t>(info.shape.numel())));
  }
  store.make_form(id, values.data() + span.start);
}

}  // namespace

bool stored_in_int8(const nn::ParamInfo& param) {
  const std::string suffix = ".weight";
  return param.shape.ndim() >= 2 && param.name.size() > suffix.size() &&
         param.name.compare(param.name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void save_model_file(const std::filesystem::path& path, const Seq2Seq& model, const text::Bpe& bpe,
                     std::span<const TensorRef> extra_tensors, const std::map<std::string, std::string>& extra_metadata,
                     WeightStorage storage) {
  const nn::ParamStore& params = model.params();
  std::vector<TensorRef> tensors;
  std::vector<Int8Weight> int8_weights;  // owns what the int8 TensorRefs view
  int8_weights.reserve(params.entries().size());
  tensors.reserve(2 * params.entries().size() + extra_tensors.size());
  for (const nn::ParamInfo& p : params.entries()) {
    const std::span<const float> values =
        params.values().subspan(static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.shape.numel()));
    if (storage == WeightStorage::int8 && stored_in_int8(p)) {
      const Int8Weight& q = int8_weights.emplace_back(quantize_param(values, p));
      tensors.push_back({p.name, p.shape, {}, DType::I8, q.values});
      tensors.push_back({scale_name(p.name), Shape{static_cast<std::int64_t>(q.scales.size())}, q.scales});
    } else {
      tensors.push_back({p.name, p.shape, values});
    }
  }
  tensors.insert(tensors.end(), extra_tensors.begin(), extra_tensors.end());
  std::map<std::string, std::string> metadata = extra_metadata;
  metadata["config"] = model.config().to_json().dump();
  metadata["bpe"] = bpe.to_json().dump();
  if (storage == WeightStorage::int8) metadata["weights"] = "int8";
  write_safetensors(path, tensors, metadata);
}

namespace {

// The file's config and BPE, its JSON gone before the weights are read (it
// would add a tenth of an int8 file's bytes to the peak of loading it).
std::pair<ModelConfig, text::Bpe> config_and_bpe(const std::filesystem::path& path,
                                                 const std::map<std::string, std::string>& meta) {
  auto field = [&](const char* key) -> const std::string& {
    auto it = meta.find(key);
    if (it == meta.end())
      throw Error(path.string() + ": the model file has no '" + key + "' entry; it was not written by attn train");
    return it->second;
  };
  nlohmann::json config_json, bpe_json;
  try {
    config_json = nlohmann::json::parse(field("config"));
    bpe_json = nlohmann::json::parse(field("bpe"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": damaged model metadata (" + e.what() + ")");
  }
  std::pair<ModelConfig, text::Bpe> read;
  try {
    read.first = ModelConfig::from_json(config_json);
    read.second = text::Bpe::from_json(bpe_json);
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  return read;
}

}  // namespace

namespace {

// decoding: the compute type to load into, or nullopt for every FP32 value.
LoadedModel load(const std::filesystem::path& path, std::optional<ComputeType> decoding) {
  SafetensorsFile file = SafetensorsFile::open(path);
  auto [config, bpe] = config_and_bpe(path, file.metadata());
  if (bpe.vocab().size() != config.vocab_size)
    throw Error(path.string() + ": the vocabulary has " + std::to_string(bpe.vocab().size()) +
                " entries but the config says " + std::to_string(config.vocab_size) + "; the file is inconsistent");
  auto model = std::make_unique<Seq2Seq>(config, Seq2Seq::Declared{});
  nn::ParamStore& params = model->params();
  const ParamReader reader(file);
  if (decoding)
    params.allocate_for_decoding(*decoding, [&](const nn::ParamInfo& p) { return reader.stored_int8(p); });
  else
    params.allocate();
  std::int64_t int8_params = 0;
  for (std::size_t i = 0; i < params.entries().size(); ++i) {
    const nn::ParamInfo& p = params.entries()[i];
    if (reader.stored_int8(p)) ++int8_params;
    const auto id = static_cast<nn::ParamId>(i);
    if (params.holds_values(id))
      reader.read(p, std::span(params.value(id), static_cast<std::size_t>(p.shape.numel())));
    else if (!file.contains(p.name))
      file.shape(p.name);  // the file's error for a missing tensor, before any work on the forms
  }
  // Matrices are independent: one per thread (int8's conversion was a fifth of
  // loading a model), the largest first, so that the buffers a form is made in
  // are held while few forms are (the peak of loading is the model it ends with).
  const std::size_t matrices = decoding ? params.weight_matrices().size() : 0;
  std::vector<std::size_t> order(matrices);
  for (std::size_t i = 0; i < matrices; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto size = [&](std::size_t i) {
      return params.weight_matrices()[i].rows * params.weight_matrices()[i].cols;
    };
    return size(a) > size(b);
  });
  std::vector<std::string> errors(matrices);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < matrices; ++i) {
    try {
      make_form(reader, params, order[i]);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (const std::string& error : errors)
    if (!error.empty()) throw Error(error);
  return {std::move(model), std::move(bpe), std::move(file), int8_params};
}

}  // namespace

LoadedModel load_model_file(const std::filesystem::path& path, ComputeType compute_type) {
  return load(path, compute_type);
}

LoadedModel load_model_values(const std::filesystem::path& path) { return load(path, std::nullopt); }

}  // namespace attn::model
