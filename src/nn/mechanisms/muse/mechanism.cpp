// MUSE (Zhao et al. 2019; docs/mechanisms-spec.md §1): attention in parallel with
// gated dynamic depth-wise convolutions over one shared value projection.
#include "attn/core/embed.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/muse/muse_mixer.h"

namespace attn::nn {

namespace {

ATTN_EMBED(attn_muse_page_js, "src/nn/mechanisms/muse/page.js");
ATTN_EMBED(attn_muse_extras_schema, "src/nn/mechanisms/muse/extras.schema.json");

using nlohmann::json;

constexpr OptionField kOptions[] = {
    {"muse_kernels", "--muse-kernels", "dynamic convolution kernel sizes", OptionType::integer_list, "[3, 15]",
     [](const json& v) {
       if (v.empty()) return std::string("at least one kernel size, e.g. 3,15");
       for (const json& k : v)
         if (k.get<std::int64_t>() < 1 || k.get<std::int64_t>() > 255) return std::string("kernel sizes in 1..255");
       return std::string();
     }},
    {"muse_tap_dropout", "--muse-tap-dropout", "DropConnect on the convolution taps", OptionType::number, "0.1",
     [](const json& v) { return v.get<double>() >= 0 && v.get<double>() < 1 ? std::string() : "in [0, 1)"; }},
    {"muse_separate_projection", "--muse-separate-projection",
     "the convolution reads its own projection of the input, not the shared V (the paper's ablation)",
     OptionType::boolean, "false", nullptr, /*omit_at_preset=*/true},
};

constexpr MapKind kKinds[] = {{"muse", "MUSE (attention ∥ conv)"}, {"muse-simple", "MUSE-simple"}};

class Muse final : public Mechanism {
 public:
  std::string_view name() const override { return "muse"; }
  std::string_view label() const override { return "MUSE: parallel multi-scale attention"; }
  std::span<const OptionField> options() const override { return kOptions; }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<MuseMixer>(params, name, spec);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  json document_extras(json& raw, bool causal, const std::vector<std::int64_t>& heads, int precision) const override {
    json e = json::object();
    if (raw.contains("kernels")) {
      const json kernels = raw["kernels"];
      raw.erase("kernels");
      e["kernels"] = kernels;
      json offsets = json::array();  // tap κ of token t reads token t + κ − offset
      for (const json& k : kernels) offsets.push_back(causal ? k.get<std::int64_t>() - 1 : k.get<std::int64_t>() / 2);
      e["offsets"] = std::move(offsets);
    }
    if (raw.contains("gate")) {
      e["gate"] = rounded_row(raw["gate"], precision);
      raw.erase("gate");
    }
    if (raw.contains("taps")) {  // mixer: [kernel][token][head][tap] → document: [kernel][head][token][tap]
      json per_kernel = json::array();
      for (const json& tokens : raw["taps"]) {
        json per_head = json::array();
        for (std::int64_t h : heads) {
          json rows = json::array();
          for (const json& token : tokens)
            rows.push_back(rounded_row(token.at(static_cast<std::size_t>(h)), precision));
          per_head.push_back(std::move(rows));
        }
        per_kernel.push_back(std::move(per_head));
      }
      raw.erase("taps");
      e["taps"] = std::move(per_kernel);
    }
    return e;
  }
  json extras_schema() const override { return json::parse(ATTN_EMBEDDED(attn_muse_extras_schema)); }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_muse_page_js); }
};

}  // namespace

const Mechanism& mechanism_muse() {
  static const Muse m;
  return m;
}

}  // namespace attn::nn
