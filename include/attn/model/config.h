// ModelConfig: everything that defines a model's shape; stored as JSON inside
// every model file, so `attn translate` needs nothing but the file.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/nn/token_mixer.h"

namespace attn::model {

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
  std::string norm = "pre";         // "pre" | "post"
  bool share_all_embeddings = true; // one table for source, target and the output projection
  bool share_decoder_output = true; // target embedding tied to the output projection
  std::int64_t max_positions = 1024;
  // Mechanisms (MECHANISMS.md §0); each only matters for the archs that use it.
  std::vector<std::int64_t> muse_kernels{3, 15};  // muse: dynamic convolution kernel sizes
  float muse_tap_dropout = 0.1f;                  // muse: DropConnect on the normalised taps
  std::int64_t csan_window = 11;                  // convsan*: keys within ±(window−1)/2
  std::int64_t csan_head_window = 3;              // convsan2d: neighbouring heads in the joint softmax
  std::int64_t csan_layers = -1;                  // convsan*: lowest encoder layers windowed (−1: ⌈L/2⌉)
  bool disa_gate = true;                          // fastdisa: fusion gate
  std::string disa_t2t = "exp";                   // fastdisa: token2token weight, exp | sigmoid
  std::string decoder_mixer;                      // "" (the arch's own) | mha | csan | fastdisa | muse

  // MUSE's parallel layer layout (muse, muse-simple, muse-separate).
  bool parallel_layers() const;
  // The self-attention mixer of encoder layer i, and of every decoder layer (causal).
  nn::MixerSpec encoder_mixer(std::int64_t layer) const;
  nn::MixerSpec decoder_self_mixer() const;

  nlohmann::json to_json() const;
  // Missing keys keep their defaults; wrong types or values throw attn::Error.
  static ModelConfig from_json(const nlohmann::json& j);
  // Throws attn::Error naming the flag when the shape is impossible.
  void validate() const;
};

// The named presets of `--arch` (fairseq-style): fills the defaults an arch
// implies; flags given by the user then override them.
ModelConfig preset(const std::string& arch);
bool is_known_arch(const std::string& arch);
// "transformer, muse, muse-simple, muse-separate, convsan, convsan2d, fastdisa"
std::string known_archs();

}  // namespace attn::model
