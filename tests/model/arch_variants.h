// Tiny configurations of every architecture and decoder mixer, shared by the
// whole-model and search tests.
#pragma once
#include <string>

#include "attn/model/config.h"

namespace attn::model {

inline ModelConfig tiny_config(const std::string& norm, bool share_all, bool share_out) {
  ModelConfig c;
  c.vocab_size = 13;
  c.dim = 8;
  c.heads = 2;
  c.ffn_dim = 12;
  c.enc_layers = 2;
  c.dec_layers = 2;
  c.dropout = 0.0f;
  c.norm = *parse_norm(norm);
  c.share_all_embeddings = share_all;
  c.share_decoder_output = share_out;
  c.max_positions = 32;
  return c;
}

// Windows and kernels shorter and longer than the tests' sentences (≤ 7 tokens).
struct ArchVariant {
  const char* arch;
  const char* decoder_mixer;
  const char* norm;
};
inline constexpr ArchVariant kArchVariants[] = {
    {"muse-simple", "", "pre"},
    {"convsan", "", "pre"},
    {"convsan2d", "", "post"},
    {"transformer", "csan", "pre"},
    {"fastdisa", "", "pre"},
    {"transformer", "fastdisa", "pre"},
    {"muse", "", "pre"},
    {"muse", "", "post"},
    {"transformer", "muse", "post"},
    {"muse-separate", "", "pre"},
    {"disa", "", "post"},
    {"transformer", "disa", "pre"},
    {"lightconv", "", "pre"},
    {"dynamicconv", "", "post"},
};

inline ModelConfig arch_config(const ArchVariant& v) {
  ModelConfig c = tiny_config(v.norm, true, true);
  c.arch = v.arch;
  c.decoder_mixer = v.decoder_mixer;
  c.options["muse_kernels"] = {3, 7};
  c.options["csan_window"] = 3;
  c.options["csan_layers"] = 1;
  c.options["lightconv_encoder_kernels"] = {3, 9};
  c.options["lightconv_decoder_kernels"] = {2, 9};
  return c;
}

// The variant a little wider than the tiny one, so products have some depth.
inline ModelConfig small_arch_config(const ArchVariant& v) {
  ModelConfig c = arch_config(v);
  c.dim = 32;
  c.ffn_dim = 48;
  return c;
}

}  // namespace attn::model
