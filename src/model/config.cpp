#include "attn/model/config.h"

#include <array>

#include "attn/core/error.h"

namespace attn::model {

namespace {

constexpr std::array<const char*, 7> kArchs{"transformer", "muse",      "muse-simple", "muse-separate",
                                            "convsan",     "convsan2d", "fastdisa"};

bool is_muse(const std::string& arch) { return arch == "muse" || arch == "muse-separate"; }

bool is_odd_positive(std::int64_t v) { return v >= 1 && v % 2 == 1; }

}  // namespace

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
          {"max_positions", max_positions},
          {"muse_kernels", muse_kernels},
          {"muse_tap_dropout", muse_tap_dropout},
          {"csan_window", csan_window},
          {"csan_head_window", csan_head_window},
          {"csan_layers", csan_layers},
          {"disa_gate", disa_gate},
          {"disa_t2t", disa_t2t},
          {"decoder_mixer", decoder_mixer}};
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
    get("muse_kernels", c.muse_kernels);
    get("muse_tap_dropout", c.muse_tap_dropout);
    get("csan_window", c.csan_window);
    get("csan_head_window", c.csan_head_window);
    get("csan_layers", c.csan_layers);
    get("disa_gate", c.disa_gate);
    get("disa_t2t", c.disa_t2t);
    get("decoder_mixer", c.decoder_mixer);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: ") + e.what());
  }
  c.validate();
  return c;
}

void ModelConfig::validate() const {
  require(is_known_arch(arch), "--arch " + arch + " is not available; choose one of " + known_archs());
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
  require(!muse_kernels.empty(), "--muse-kernels needs at least one kernel size, e.g. 3,15");
  for (std::int64_t k : muse_kernels)
    require(k >= 1 && k <= 255, "--muse-kernels: kernel size " + std::to_string(k) + " is not in 1..255");
  require(muse_tap_dropout >= 0.0f && muse_tap_dropout < 1.0f, "--muse-tap-dropout must be in [0, 1)");
  require(is_odd_positive(csan_window),
          "--csan-window must be an odd number ≥ 1 (got " + std::to_string(csan_window) + "), e.g. 11 for ±5");
  require(is_odd_positive(csan_head_window),
          "--csan-head-window must be an odd number ≥ 1 (got " + std::to_string(csan_head_window) + ")");
  require(csan_layers >= -1 && csan_layers <= enc_layers,
          "--csan-layers must be between 0 and --enc-layers (" + std::to_string(enc_layers) + ")");
  require(disa_t2t == "exp" || disa_t2t == "sigmoid", "--disa-t2t must be exp or sigmoid (got " + disa_t2t + ")");
  require(decoder_mixer.empty() || decoder_mixer == "mha" || decoder_mixer == "csan" ||
              decoder_mixer == "fastdisa" || decoder_mixer == "muse",
          "--decoder-mixer must be mha, csan, fastdisa or muse (got " + decoder_mixer + ")");
  require(arch != "fastdisa" || heads % 2 == 0,
          "--heads must be even for Fast-DiSA's forward and backward heads (got " + std::to_string(heads) + ")");
}

bool ModelConfig::parallel_layers() const { return is_muse(arch) || arch == "muse-simple"; }

nn::MixerSpec ModelConfig::encoder_mixer(std::int64_t layer) const {
  nn::MixerSpec spec;
  spec.d = dim;
  spec.heads = heads;
  spec.kernels = muse_kernels;
  spec.tap_dropout = muse_tap_dropout;
  spec.separate_conv_projection = arch == "muse-separate";
  spec.window = csan_window;
  spec.disa_gate = disa_gate;
  spec.disa_t2t = disa_t2t;
  const std::int64_t windowed = csan_layers >= 0 ? csan_layers : (enc_layers + 1) / 2;
  if (is_muse(arch)) {
    spec.kind = "muse";
  } else if ((arch == "convsan" || arch == "convsan2d") && layer < windowed) {
    spec.kind = arch == "convsan" ? "csan" : "csan2d";
    spec.head_window = arch == "convsan" ? 1 : csan_head_window;
  } else if (arch == "fastdisa") {
    spec.kind = "fastdisa";
  }
  return spec;
}

nn::MixerSpec ModelConfig::decoder_self_mixer() const {
  nn::MixerSpec spec = encoder_mixer(0);
  spec.causal = true;
  spec.head_window = 1;
  spec.kind = decoder_mixer.empty() ? (is_muse(arch) ? "muse" : "mha") : decoder_mixer;
  return spec;
}

bool is_known_arch(const std::string& arch) {
  for (const char* a : kArchs)
    if (arch == a) return true;
  return false;
}

std::string known_archs() {
  std::string list;
  for (const char* a : kArchs) list += (list.empty() ? "" : ", ") + std::string(a);
  return list;
}

ModelConfig preset(const std::string& arch) {
  require(is_known_arch(arch), "--arch " + arch + " is not available; choose one of " + known_archs());
  ModelConfig c;
  c.arch = arch;
  return c;
}

}  // namespace attn::model
