// LightConv and DynamicConv (Wu et al. 2019): two mechanisms of one mixer,
// fixed or predicted taps (lightconv_mixer.h). LightConv owns the options
// both read.
#include "attn/core/embed.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/lightconv/lightconv_mixer.h"

namespace attn::nn {

namespace {

ATTN_EMBED(attn_lightconv_page_js, "src/nn/mechanisms/lightconv/page.js");
ATTN_EMBED(attn_lightconv_extras_schema, "src/nn/mechanisms/lightconv/extras.schema.json");

using nlohmann::json;

std::string kernel_sizes(const json& v, bool odd) {
  if (v.empty()) return "one kernel size per layer, e.g. 3,7,15";
  for (const json& k : v) {
    const auto size = k.get<std::int64_t>();
    if (size < 1 || size > 255) return "kernel sizes in 1..255";
    if (odd && size % 2 == 0) return "odd kernel sizes (a centred window), e.g. 3,7,15";
  }
  return std::string();
}

// fairseq's lightconv_iwslt_de_en: the kernel grows with depth; layer i takes
// entry i, deeper layers the last. Added after the first model files: left out
// of the config while at their preset.
constexpr OptionField kOptions[] = {
    {"lightconv_encoder_kernels", "--lightconv-encoder-kernels",
     "the encoder's kernel size per layer, also dynamicconv's (the last entry for deeper layers)",
     OptionType::integer_list, "[3, 7, 15, 31, 31, 31, 31]", [](const json& v) { return kernel_sizes(v, true); },
     /*omit_at_preset=*/true},
    {"lightconv_decoder_kernels", "--lightconv-decoder-kernels",
     "the decoder's (causal) kernel size per layer, also dynamicconv's (the last entry for deeper layers)",
     OptionType::integer_list, "[3, 7, 15, 31, 31, 31]", [](const json& v) { return kernel_sizes(v, false); },
     /*omit_at_preset=*/true},
    {"lightconv_weight_dropout", "--lightconv-weight-dropout",
     "DropConnect on the convolution taps in training, also dynamicconv's", OptionType::number, "0.1",
     [](const json& v) { return v.get<double>() >= 0 && v.get<double>() < 1 ? std::string() : "in [0, 1)"; },
     /*omit_at_preset=*/true},
};

// The per-token taps: mixer [token][head][tap] → document [head][token][tap], rounded with sums kept.
json document_taps(json& raw, const std::vector<std::int64_t>& heads, int precision) {
  json e = json::object();
  if (!raw.contains("taps")) return e;
  json per_head = json::array();
  for (std::int64_t h : heads) {
    json rows = json::array();
    for (const json& token : raw["taps"]) rows.push_back(rounded_row(token.at(static_cast<std::size_t>(h)), precision));
    per_head.push_back(std::move(rows));
  }
  raw.erase("taps");
  e["taps"] = std::move(per_head);
  return e;
}

// The keys a query's taps reach: [i − left, i + right] (centred in the encoder, causal in the decoder).
KeyWindow band_of(const json& raw, bool causal) {
  KeyWindow w;
  if (causal) w.ahead = 0;
  if (raw.contains("left") && raw.contains("right")) {
    w.behind = raw["left"].get<std::int64_t>();
    w.ahead = raw["right"].get<std::int64_t>();
  }
  return w;
}

constexpr MapKind kLightKinds[] = {{"lightconv", "LightConv (fixed kernels)"}};
constexpr MapKind kDynamicKinds[] = {{"dynamicconv", "DynamicConv (kernels per token)"}};

// LightConv and DynamicConv differ only in where the taps come from; the maps,
// their extras and the page are the same. DynamicConv takes LightConv's options.
class ConvMechanism final : public Mechanism {
 public:
  explicit ConvMechanism(TapSource taps) : taps_(taps) {}
  std::string_view name() const override { return fixed() ? "lightconv" : "dynamicconv"; }
  std::string_view label() const override {
    return fixed() ? "LightConv: lightweight depth-wise convolution"
                   : "DynamicConv: depth-wise convolution with per-token kernels";
  }
  std::span<const OptionField> options() const override {
    return fixed() ? std::span<const OptionField>(kOptions) : std::span<const OptionField>();
  }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<LightConvMixer>(params, name, spec, taps_);
  }
  std::span<const MapKind> map_kinds() const override {
    return fixed() ? std::span<const MapKind>(kLightKinds) : std::span<const MapKind>(kDynamicKinds);
  }
  json document_extras(json& raw, bool /*causal*/, const std::vector<std::int64_t>& heads,
                       int precision) const override {
    return document_taps(raw, heads, precision);
  }
  KeyWindow key_window(const json& raw, bool causal, std::int64_t /*head*/) const override {
    return band_of(raw, causal);
  }
  json extras_schema() const override { return json::parse(ATTN_EMBEDDED(attn_lightconv_extras_schema)); }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_lightconv_page_js); }

 private:
  bool fixed() const { return taps_ == TapSource::fixed; }
  TapSource taps_;
};

}  // namespace

const Mechanism& mechanism_lightconv() {
  static const ConvMechanism m(TapSource::fixed);
  return m;
}

const Mechanism& mechanism_dynamicconv() {
  static const ConvMechanism m(TapSource::predicted);
  return m;
}

}  // namespace attn::nn
