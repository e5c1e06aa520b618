// A Transformer as a CTranslate2 model directory (`attn export --to ctranslate2`):
// model.bin in CTranslate2's binary format (version 6) with the variables of
// its TransformerSpec (revision 7), config.json, and the joint vocabulary as
// shared_vocabulary.json; attn_bpe.json beside them holds attn's BPE, which
// CTranslate2 ignores and a caller needs to turn text into its tokens.
//
// The mapping, which CTranslate2 then decodes as attn does:
//   - pre-norm (or post-norm) layers, each sublayer's LayerNorm (ε = 1e-5),
//     and with pre-norm a final LayerNorm per stack;
//   - Q, K, V as one [3d, d] projection (cross-attention: Q alone, K and V as
//     one [2d, d]); queries scaled by 1/sqrt(d/heads), CTranslate2's default;
//   - ReLU feed-forward;
//   - embeddings × sqrt(d) (written as that number) plus attn's own sinusoid
//     table [max_positions, d] (sin in the first half, cos in the second,
//     positions from 0), written out: CTranslate2's built-in table starts at
//     position 1;
//   - the source starts with no <s> and ends with no </s>, the decoder starts
//     from <s>: attn's ids 0–3 are <pad>, <unk>, <s>, </s>;
//   - one table shared by source, target and output projection when attn
//     shares them: stored once, the other names are aliases of it.
// Weights are written in FP32; a model stored in int8 (`attn quantize`) is
// written dequantized. CTranslate2 quantizes at load (compute_type int8).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attn/model/model_file.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"

namespace attn::model {

// CTranslate2's DataType ids (include/ctranslate2/types.h).
enum class Ct2Type : std::uint8_t { float32 = 0, int8 = 1, int16 = 2, int32 = 3 };

struct Ct2Variable {
  std::string name;                  // "encoder/layer_0/self_attention/linear_0/weight"
  std::vector<std::uint32_t> shape;  // empty: a scalar
  Ct2Type type = Ct2Type::float32;
  std::vector<std::byte> bytes;  // little-endian, row-major
};

struct Ct2Model {
  std::vector<Ct2Variable> variables;                        // sorted by name
  std::vector<std::pair<std::string, std::string>> aliases;  // (alias, variable it names), sorted
  nlohmann::json config;                                     // config.json
  std::vector<std::string> vocabulary;                       // pieces by id
};

// CTranslate2's name for the model spec and its revision, and the binary version written.
inline constexpr const char* kCt2SpecName = "TransformerSpec";
inline constexpr std::uint32_t kCt2SpecRevision = 7;
inline constexpr std::uint32_t kCt2BinaryVersion = 6;

// The CTranslate2 model of an --arch transformer model (any sizes, pre- or
// post-norm, shared or separate embeddings). Throws Error saying what
// CTranslate2 lacks for any other mechanism or layer layout.
Ct2Model ctranslate2_model(const Seq2Seq& model, const text::Vocab& vocab);

// model.bin's bytes.
std::vector<std::byte> ctranslate2_model_bin(const Ct2Model& m);

// Writes the model directory `dir`: into a temporary directory beside it,
// renamed to `dir` once every file is on disk, so a failure leaves nothing.
// `dir` must not exist, or be an empty directory. Throws Error.
void export_ctranslate2(const Seq2Seq& model, const text::Bpe& bpe, const std::filesystem::path& dir);

}  // namespace attn::model
