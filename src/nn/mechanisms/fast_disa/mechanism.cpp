// Fast-DiSA (Shen et al. 2018; docs/mechanisms-spec.md §3): directional, feature-wise
// attention in its factorised form, with a fusion gate.
#include "attn/core/embed.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/directional/directions.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"

namespace attn::nn {

namespace {

ATTN_EMBED(attn_fast_disa_page_js, "src/nn/mechanisms/fast_disa/page.js");
ATTN_EMBED(attn_fast_disa_extras_schema, "src/nn/mechanisms/fast_disa/extras.schema.json");

using nlohmann::json;

constexpr OptionField kOptions[] = {
    {"disa_gate", "--disa-gate", "fusion gate", OptionType::boolean, "true", nullptr},
    {"disa_t2t", "--disa-t2t", "token2token weight: exp or sigmoid", OptionType::text, "\"exp\"",
     [](const json& v) { return v == "exp" || v == "sigmoid" ? std::string() : "exp or sigmoid"; }},
};

constexpr MapKind kKinds[] = {{"fastdisa", "Fast-DiSA"}};

class FastDisa final : public Mechanism {
 public:
  std::string_view name() const override { return "fastdisa"; }
  std::string_view label() const override { return "Fast-DiSA: fast directional self-attention"; }
  std::span<const OptionField> options() const override { return kOptions; }
  void validate(const MixerSpec& spec) const override { directional::require_directional_heads(spec, "Fast-DiSA"); }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<FastDisaMixer>(params, name, spec);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  json document_extras(json& raw, bool causal, const std::vector<std::int64_t>& heads, int precision) const override {
    json e = json::object();
    if (raw.contains("directions")) {
      e["directions"] = select_heads(raw["directions"], heads);
      raw.erase("directions");
    }
    e["diagonal"] = causal;  // encoder heads are strict (docs/mechanisms-spec.md §0.4), the causal decoder's include i
    if (raw.contains("fusion_gate")) {
      const json gate = raw["fusion_gate"];  // [heads][from] or null
      raw.erase("fusion_gate");
      e["fusion_gate"] = gate.is_null() ? json(nullptr) : rounded_numbers(select_heads(gate, heads), precision);
    }
    return e;
  }
  // Encoder heads are strict (forward: j < i, backward: j > i); the causal decoder's heads see j ≤ i.
  KeyWindow key_window(const json& raw, bool causal, std::int64_t head) const override {
    if (causal || !raw.contains("directions")) return Mechanism::key_window(raw, causal, head);
    const bool forward = raw["directions"].at(static_cast<std::size_t>(head)) == "forward";
    KeyWindow w;
    (forward ? w.ahead : w.behind) = -1;
    return w;
  }
  json extras_schema() const override { return json::parse(ATTN_EMBEDDED(attn_fast_disa_extras_schema)); }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_fast_disa_page_js); }
};

}  // namespace

const Mechanism& mechanism_fast_disa() {
  static const FastDisa m;
  return m;
}

}  // namespace attn::nn
