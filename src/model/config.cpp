#include "attn/model/config.h"

#include "attn/core/error.h"

namespace attn::model {

std::string_view norm_name(Norm norm) { return norm == Norm::pre ? "pre" : "post"; }

std::optional<Norm> parse_norm(std::string_view text) {
  if (text == "pre") return Norm::pre;
  if (text == "post") return Norm::post;
  return std::nullopt;
}

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json j = {{"arch", arch},
                      {"vocab_size", vocab_size},
                      {"dim", dim},
                      {"ffn_dim", ffn_dim},
                      {"heads", heads},
                      {"enc_layers", enc_layers},
                      {"dec_layers", dec_layers},
                      {"dropout", dropout},
                      {"activation_dropout", activation_dropout},
                      {"norm", std::string(norm_name(norm))},
                      {"share_all_embeddings", share_all_embeddings},
                      {"share_decoder_output", share_decoder_output},
                      {"max_positions", max_positions},
                      {"decoder_mixer", decoder_mixer}};
  // Written only when used: files of models without it (all before it existed)
  // keep their config JSON byte for byte, and from_json reads 0 when it is absent.
  if (attention_dropout != 0.0f) j["attention_dropout"] = attention_dropout;
  j.update(nn::stored_options(options));
  return j;
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
    get("attention_dropout", c.attention_dropout);
    if (j.contains("norm")) {
      const std::string norm = j.at("norm").get<std::string>();
      const std::optional<Norm> parsed = parse_norm(norm);
      require(parsed.has_value(), "model config: norm must be pre or post (got " + norm + ")");
      c.norm = *parsed;
    }
    get("share_all_embeddings", c.share_all_embeddings);
    get("share_decoder_output", c.share_decoder_output);
    get("max_positions", c.max_positions);
    get("decoder_mixer", c.decoder_mixer);
    for (auto it = c.options.begin(); it != c.options.end(); ++it)
      if (j.contains(it.key())) {
        const nlohmann::json& value = j.at(it.key());
        nn::check_option(*nn::find_option(it.key()), value);
        it.value() = value;
      }
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
  nn::require_heads_divide(dim, heads);
  require(ffn_dim > 0, "--ffn-dim must be positive");
  require(enc_layers > 0 && dec_layers > 0, "--enc-layers and --dec-layers must be at least 1");
  require(dropout >= 0.0f && dropout < 1.0f, "--dropout must be in [0, 1)");
  require(activation_dropout >= 0.0f && activation_dropout < 1.0f, "--activation-dropout must be in [0, 1)");
  require(attention_dropout >= 0.0f && attention_dropout < 1.0f,
          "--attention-dropout must be in [0, 1) (got " + std::to_string(attention_dropout) + ")");
  require(vocab_size > 4, "the vocabulary is too small (" + std::to_string(vocab_size) + " entries)");
  require(max_positions > 0, "max_positions must be positive");
  for (auto it = options.begin(); it != options.end(); ++it) {
    const nn::OptionField* option = nn::find_option(it.key());
    require(option != nullptr, "model config: unknown option " + it.key());
    nn::check_option(*option, it.value());
  }
  require(decoder_mixer.empty() || nn::mechanism_named(decoder_mixer) != nullptr,
          "--decoder-mixer must be one of " + nn::mechanism_names() + " (got " + decoder_mixer + ")");
  const ArchPreset& p = find_preset(arch);
  if (!p.lower_layers_option.empty()) {
    const std::int64_t lower = options.at(std::string(p.lower_layers_option)).get<std::int64_t>();
    require(lower >= -1 && lower <= enc_layers, std::string(nn::find_option(p.lower_layers_option)->flag) +
                                                    " must be between 0 and --enc-layers (" +
                                                    std::to_string(enc_layers) + ")");
  }
  for (std::int64_t layer = 0; layer < enc_layers; ++layer) {
    const nn::MixerSpec spec = encoder_mixer(layer);
    nn::find_mechanism(spec.mechanism).validate(spec);
  }
  for (std::int64_t layer = 0; layer < dec_layers; ++layer) {
    const nn::MixerSpec spec = decoder_self_mixer(layer);
    nn::find_mechanism(spec.mechanism).validate(spec);
  }
}

bool ModelConfig::parallel_layers() const { return find_preset(arch).parallel; }

namespace {

// The spec of a mixer of this config: the arch's fixed options win.
nn::MixerSpec mixer_spec(const ModelConfig& c, std::string_view mechanism, bool causal, std::int64_t layer) {
  nn::MixerSpec spec;
  spec.mechanism = std::string(mechanism);
  spec.d = c.dim;
  spec.heads = c.heads;
  spec.causal = causal;
  spec.layer = layer;
  spec.attention_dropout = c.attention_dropout;
  spec.options = c.options;
  spec.options.update(fixed_options(find_preset(c.arch)));
  return spec;
}

}  // namespace

nn::MixerSpec ModelConfig::encoder_mixer(std::int64_t layer) const {
  const ArchPreset& p = find_preset(arch);
  std::string_view mechanism = p.encoder;
  if (!p.lower_layers_option.empty()) {
    const std::int64_t lower = options.at(std::string(p.lower_layers_option)).get<std::int64_t>();
    if (layer >= (lower >= 0 ? lower : (enc_layers + 1) / 2)) mechanism = p.encoder_upper;
  }
  return mixer_spec(*this, mechanism, false, layer);
}

nn::MixerSpec ModelConfig::decoder_self_mixer(std::int64_t layer) const {
  return mixer_spec(*this, decoder_mixer.empty() ? find_preset(arch).decoder : std::string_view(decoder_mixer), true,
                    layer);
}

ModelConfig preset(const std::string& arch) {
  ModelConfig c;
  c.arch = find_preset(arch).name;
  return c;
}

}  // namespace attn::model
