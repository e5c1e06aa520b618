// ModelConfig: everything that defines a model's shape; stored as JSON inside
// every model file, so `attn translate` needs nothing but the file.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/model/presets.h"
#include "attn/nn/mechanism.h"

namespace attn::model {

// Where each sublayer's LayerNorm sits: before it, on the residual branch
// (x + f(LN(x)), with a final LN per stack), or after the residual sum (LN(x + f(x))).
enum class Norm { pre, post };
// "pre", "post": the text of the config JSON and of --norm.
std::string_view norm_name(Norm norm);
// nullopt for any other text.
std::optional<Norm> parse_norm(std::string_view text);

struct ModelConfig {
  std::string arch = "transformer";
  std::int64_t vocab_size = 0;  // joint source+target vocabulary (BPE)
  std::int64_t dim = 256;
  std::int64_t ffn_dim = 1024;
  std::int64_t heads = 4;
  std::int64_t enc_layers = 3;
  std::int64_t dec_layers = 3;
  float dropout = 0.3f;             // on embeddings and every residual branch
  float activation_dropout = 0.0f;  // inside the FFN, after the ReLU
  float attention_dropout = 0.0f;   // on the attention weights after the softmax, every mixer and cross-attention
  Norm norm = Norm::pre;
  bool share_all_embeddings = true;  // one table for source, target and the output projection
  bool share_decoder_output = true;  // target embedding tied to the output projection
  std::int64_t max_positions = 1024;
  // Every mechanism's options by their keys (nn/mechanism.h), e.g. "csan_window": 11;
  // each only matters for the archs that use it. Stored flat in the config JSON.
  nlohmann::json options = nn::preset_options();
  std::string decoder_mixer;  // "" (the arch's own) or a mechanism's name: our causal variants

  // MUSE's parallel layer layout (the arch's preset says).
  bool parallel_layers() const;
  // The self-attention mixer of encoder layer i, and of decoder layer i (causal).
  nn::MixerSpec encoder_mixer(std::int64_t layer) const;
  nn::MixerSpec decoder_self_mixer(std::int64_t layer = 0) const;

  nlohmann::json to_json() const;
  // Missing keys keep their defaults; wrong types or values throw attn::Error.
  static ModelConfig from_json(const nlohmann::json& j);
  // Throws attn::Error naming the flag when the shape is impossible.
  void validate() const;
};

// The named presets of `--arch` (fairseq-style; model/presets.h): fills the
// defaults an arch implies; flags given by the user then override them.
ModelConfig preset(const std::string& arch);

}  // namespace attn::model
