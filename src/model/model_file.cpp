#include "attn/model/model_file.h"

#include <cmath>
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

// values = q·scale of the int8 parameter p and its "<name>.scale" in file.
void dequantize_param(const SafetensorsFile& file, const nn::ParamInfo& p, std::span<float> values) {
  const std::string where = file.path().string() + ": int8 tensor '" + p.name + "'";
  if (!(file.shape(p.name) == p.shape))
    throw Error(where + " has shape " + file.shape(p.name).str() + " but " + p.shape.str() +
                " is expected; was it written for another model configuration?");
  if (!stored_in_int8(p)) throw Error(where + ": attn stores this parameter in FP32 only; the file is inconsistent");
  const auto [rows, k] = weight_rows(p.shape);
  const std::string scales_name = scale_name(p.name);
  if (!file.contains(scales_name)) throw Error(where + " has no '" + scales_name + "'; the file is incomplete");
  std::vector<float> scales(static_cast<std::size_t>(rows));
  file.copy_to(scales_name, Shape{rows}, scales);
  for (const float s : scales)
    if (!std::isfinite(s) || s < 0.0f)
      throw Error(where + " has a scale that is negative or not finite; the file is damaged");
  const std::span<const std::int8_t> q = file.int8(p.name);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < k; ++c)
      values[static_cast<std::size_t>(r * k + c)] = static_cast<float>(q[static_cast<std::size_t>(r * k + c)]) *
                                                    scales[static_cast<std::size_t>(r)];
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

LoadedModel load_model_file(const std::filesystem::path& path, ComputeType compute_type) {
  SafetensorsFile file = SafetensorsFile::read(path);
  const auto& meta = file.metadata();
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
  ModelConfig config;
  text::Bpe bpe;
  try {
    config = ModelConfig::from_json(config_json);
    bpe = text::Bpe::from_json(bpe_json);
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
  if (bpe.vocab().size() != config.vocab_size)
    throw Error(path.string() + ": the vocabulary has " + std::to_string(bpe.vocab().size()) +
                " entries but the config says " + std::to_string(config.vocab_size) + "; the file is inconsistent");
  auto model = std::make_unique<Seq2Seq>(config);
  nn::ParamStore& params = model->params();
  std::int64_t int8_params = 0;
  for (const nn::ParamInfo& p : params.entries()) {
    const std::span<float> values =
        params.values().subspan(static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.shape.numel()));
    if (!file.contains(p.name) || file.dtype(p.name) == DType::F32) {
      file.copy_to(p.name, p.shape, values);
      continue;
    }
    dequantize_param(file, p, values);
    ++int8_params;
  }
  // Valid checksums do not make valid weights: a NaN model would translate every line to nothing.
  const std::span<const float> values = params.values();
  if (!kernels::all_finite(values.data(), static_cast<std::int64_t>(values.size())))
    throw Error(path.string() +
                ": holds weights that are NaN or infinite (a diverged or damaged model); it cannot be used");
  params.set_compute_type(compute_type);
  return {std::move(model), std::move(bpe), std::move(file), int8_params};
}

}  // namespace attn::model
