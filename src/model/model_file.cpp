#include "attn/model/model_file.h"

#include <vector>

#include "attn/core/error.h"
#include "attn/kernels/elementwise.h"

namespace attn::model {

void save_model_file(const std::filesystem::path& path, const Seq2Seq& model, const text::Bpe& bpe,
                     std::span<const TensorRef> extra_tensors,
                     const std::map<std::string, std::string>& extra_metadata) {
  const nn::ParamStore& params = model.params();
  std::vector<TensorRef> tensors;
  tensors.reserve(params.entries().size() + extra_tensors.size());
  for (const nn::ParamInfo& p : params.entries())
    tensors.push_back({p.name, p.shape,
                       params.values().subspan(static_cast<std::size_t>(p.offset),
                                               static_cast<std::size_t>(p.shape.numel()))});
  tensors.insert(tensors.end(), extra_tensors.begin(), extra_tensors.end());
  std::map<std::string, std::string> metadata = extra_metadata;
  metadata["config"] = model.config().to_json().dump();
  metadata["bpe"] = bpe.to_json().dump();
  write_safetensors(path, tensors, metadata);
}

LoadedModel load_model_file(const std::filesystem::path& path) {
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
  for (const nn::ParamInfo& p : params.entries())
    file.copy_to(p.name, p.shape,
                 params.values().subspan(static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.shape.numel())));
  // Valid checksums do not make valid weights: a NaN model would translate every line to nothing.
  const std::span<const float> values = params.values();
  if (!kernels::all_finite(values.data(), static_cast<std::int64_t>(values.size())))
    throw Error(path.string() + ": holds weights that are NaN or infinite (a diverged or damaged model); it cannot be used");
  return {std::move(model), std::move(bpe), std::move(file)};
}

}  // namespace attn::model
