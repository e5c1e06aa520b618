// DiSA (DiSAN, Shen et al. 2018; docs/mechanisms.md, "DiSA"): directional,
// feature-wise attention computed directly, the T × T × d_h tensor held — the
// yardstick of Fast-DiSA. Its maps carry Fast-DiSA's extras, shaped and drawn
// by Fast-DiSA's module.
#include "attn/core/embed.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/directional/directions.h"
#include "attn/nn/mechanisms/disa/disa.h"

namespace attn::nn {

const Mechanism& mechanism_fast_disa();

namespace {

ATTN_EMBED(attn_disa_page_js, "src/nn/mechanisms/disa/page.js");
ATTN_EMBED(attn_disa_extras_schema, "src/nn/mechanisms/disa/extras.schema.json");

using nlohmann::json;

constexpr MapKind kKinds[] = {{"disa", "DiSA"}};

class Disa final : public Mechanism {
 public:
  std::string_view name() const override { return "disa"; }
  std::string_view label() const override { return "DiSA: directional self-attention (DiSAN), the T×T×d tensor held"; }
  std::span<const OptionField> options() const override { return {}; }
  void validate(const MixerSpec& spec) const override { directional::require_directional_heads(spec, "DiSA"); }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<DisaMixer>(params, name, spec);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  // Directions, the diagonal, the fusion gate: the same extras as Fast-DiSA's.
  json document_extras(json& raw, bool causal, const std::vector<std::int64_t>& heads, int precision) const override {
    return mechanism_fast_disa().document_extras(raw, causal, heads, precision);
  }
  // The same directions, so the same keys a query may see.
  KeyWindow key_window(const json& raw, bool causal, std::int64_t head) const override {
    return mechanism_fast_disa().key_window(raw, causal, head);
  }
  json extras_schema() const override { return json::parse(ATTN_EMBEDDED(attn_disa_extras_schema)); }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_disa_page_js); }
};

}  // namespace

const Mechanism& mechanism_disa() {
  static const Disa m;
  return m;
}

}  // namespace attn::nn
