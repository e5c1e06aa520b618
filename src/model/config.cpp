#include "attn/model/config.h"

#include "attn/core/error.h"

namespace attn::model {

nlohmann::json ModelConfig::to_json() const {
  return {{"arch", arch},
          {"vocab_size", vocab_size},
          {"dim", dim},
          {"ffn_dim", ffn_dim},
          {"heads", heads},
          {"enc_layers", enc_layers},
          {"dec_layers", dec_layers},
          {"dropout", dropout},
          {"activation_dropout", activation_dropout},
          {"norm", norm},
          {"share_all_embeddings", share_all_embeddings},
          {"share_decoder_output", share_decoder_output},
          {"max_positions", max_positions}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  ModelConfig c;
  try {
    auto get = [&j](const char* key, auto& field) {
      if (j.contains(key)) field = j.at(key).get<std::remove_reference_t<decltype(field)>>();
    };
    get("arch", c.arch);
    get("vocab_size", c.vocab_size);
    get("dim", c.dim);
    get("ffn_dim", c.ffn_dim);
    get("heads", c.heads);
    get("enc_layers", c.enc_layers);
    get("dec_layers", c.dec_layers);
    get("dropout", c.dropout);
    get("activation_dropout", c.activation_dropout);
    get("norm", c.norm);
    get("share_all_embeddings", c.share_all_embeddings);
    get("share_decoder_output", c.share_decoder_output);
    get("max_positions", c.max_positions);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: ") + e.what());
  }
  c.validate();
  return c;
}

void ModelConfig::validate() const {
  require(is_known_arch(arch), "--arch " + arch + " is not available; choose transformer");
  require(dim > 0 && dim % 2 == 0, "--dim must be a positive even number (got " + std::to_string(dim) + ")");
  require(heads > 0, "--heads must be positive");
  require(dim % heads == 0, "--dim " + std::to_string(dim) + " is not divisible by --heads " +
                                std::to_string(heads) + "; choose heads that divide the dimension");
  require(ffn_dim > 0, "--ffn-dim must be positive");
  require(enc_layers > 0 && dec_layers > 0, "--enc-layers and --dec-layers must be at least 1");
  require(dropout >= 0.0f && dropout < 1.0f, "--dropout must be in [0, 1)");
  require(activation_dropout >= 0.0f && activation_dropout < 1.0f, "--activation-dropout must be in [0, 1)");
  require(norm == "pre" || norm == "post", "--norm must be pre or post (got " + norm + ")");
  require(vocab_size > 4, "the vocabulary is too small (" + std::to_string(vocab_size) + " entries)");
  require(max_positions > 0, "max_positions must be positive");
}

bool is_known_arch(const std::string& arch) { return arch == "transformer"; }

ModelConfig preset(const std::string& arch) {
  require(is_known_arch(arch), "--arch " + arch + " is not available in this version; choose transformer");
  ModelConfig c;
  c.arch = arch;
  return c;
}

}  // namespace attn::model
