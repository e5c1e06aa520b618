// Model files: one .safetensors file holds the parameters, the config and the
// BPE (docs/guide.md, "What a model file holds"), so `attn translate` needs nothing
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

// How the parameters are stored. int8 (`attn quantize`): each weight matrix
// as an I8 tensor of its name, quantized per row of its last dimension
// (kernels::quantize_row), with the rows' FP32 scales as "<name>.scale"
// [rows]; everything else in FP32. About 4× smaller; every command and
// compute type reads it: int8 takes the int8 rows as they are, the others
// dequantize them (q·scale).
enum class WeightStorage { fp32, int8 };

// The parameters WeightStorage::int8 stores in int8: the matrices the
// products multiply by (names ending ".weight", two or more dimensions —
// linear layers, the embedding and output projection, MUSE's filter
// generators, Fast-DiSA's per-head layers). Not biases, norms or gates.
bool stored_in_int8(const nn::ParamInfo& param);

// Writes atomically. extra_tensors are stored after the parameters.
void save_model_file(const std::filesystem::path& path, const Seq2Seq& model, const text::Bpe& bpe,
                     std::span<const TensorRef> extra_tensors = {},
                     const std::map<std::string, std::string>& extra_metadata = {},
                     WeightStorage storage = WeightStorage::fp32);

struct LoadedModel {
  std::unique_ptr<Seq2Seq> model;
  text::Bpe bpe;
  SafetensorsFile file;          // for the extras (optimizer, training state), read from the file when asked
  std::int64_t int8_params = 0;  // parameters the file stored in int8 (attn quantize)
};

// Reads and checks a model file: a valid attn file, a valid config, a BPE
// whose vocabulary matches the config, every parameter present with its shape
// (in FP32, or in int8 with finite scales). Each problem is a one-line Error
// naming the file. The model is loaded for decoding in `compute_type`
// (ComputeTypes::decoding): its weight matrices are put into that type's form
// here, once (under fp32, Wᵀ packed for the tiles), and the store keeps no
// FP32 copy of a matrix held in a form (nn::ParamStore::allocate_for_decoding);
// no gradients until a backward asks. Each tensor is read from the file
// straight into its place: the file's bytes are not held beside the model.
LoadedModel load_model_file(const std::filesystem::path& path, ComputeType compute_type);

// The same checks, with every FP32 value held and no forms made, as training
// and the commands that rewrite or inspect a model (average, quantize,
// export, info) need; an int8 file's weights dequantized.
LoadedModel load_model_values(const std::filesystem::path& path);

}  // namespace attn::model
