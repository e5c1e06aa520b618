// Fast-DiSA (Shen et al. 2018; MECHANISMS.md §3): directional, feature-wise
// attention in its factorised form, with a fusion gate.
#include "attn/core/error.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/fast_disa/fast_disa.h"

namespace attn::nn {

namespace {

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
  void validate(const MixerSpec& spec) const override {
    require(spec.causal || spec.heads % 2 == 0, "--heads must be even for Fast-DiSA's forward and backward heads (got " +
                                                    std::to_string(spec.heads) + ")");
  }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<FastDisaMixer>(params, name, spec);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  json document_extras(json& raw, bool causal, const std::vector<std::int64_t>& heads,
                       int precision) const override {
    json e = json::object();
    if (raw.contains("directions")) {
      e["directions"] = select_heads(raw["directions"], heads);
      raw.erase("directions");
    }
    e["diagonal"] = causal;  // encoder heads are strict (MECHANISMS.md §0), the causal decoder's include i
    if (raw.contains("fusion_gate")) {
      const json gate = raw["fusion_gate"];  // [heads][from] or null
      raw.erase("fusion_gate");
      e["fusion_gate"] = gate.is_null() ? json(nullptr) : rounded_numbers(select_heads(gate, heads), precision);
    }
    return e;
  }
  std::string_view page_note() const override {
    return R"JS((e) => "Fast-DiSA: feature-wise weights averaged over the head's features. Forward heads attend to earlier tokens, backward heads to later ones" +
  (e.diagonal ? " (the token itself included)" : " (the token itself excluded)") + ". A row with no allowed key is all 0. " +
  (e.fusion_gate ? "The fusion gate G is the share of the head's own value kept (U = G⊙v + (1−G)⊙attention), averaged over features." : ""))JS";
  }
};

}  // namespace

const Mechanism& mechanism_fast_disa() {
  static const FastDisa m;
  return m;
}

}  // namespace attn::nn
