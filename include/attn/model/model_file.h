// Model files: one .safetensors file holds the parameters, the config and the
// BPE (DESIGN.md, "Files a user keeps"), so `attn translate` needs nothing
// else. Training checkpoints add optimizer moments and training state through
// the extra tensors and metadata (see train/checkpoint.h).
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "attn/core/safetensors.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"

namespace attn::model {

// Writes atomically. extra_tensors are stored after the parameters.
void save_model_file(const std::filesystem::path& path, const Seq2Seq& model, const text::Bpe& bpe,
                     std::span<const TensorRef> extra_tensors = {},
                     const std::map<std::string, std::string>& extra_metadata = {});

struct LoadedModel {
  std::unique_ptr<Seq2Seq> model;
  text::Bpe bpe;
  SafetensorsFile file;  // for the extras (optimizer, training state)
};

// Reads and checks a model file: a valid attn file, a valid config, a BPE
// whose vocabulary matches the config, every parameter present with its shape.
// Each problem is a one-line Error naming the file.
LoadedModel load_model_file(const std::filesystem::path& path);

}  // namespace attn::model
