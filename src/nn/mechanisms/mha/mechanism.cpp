// Multi-head attention (Vaswani et al. 2017): the baseline, global in the
// encoder, causal in the decoder. No options, no extras.
#include "attn/core/embed.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/mha/mha_mixer.h"

namespace attn::nn {

namespace {

ATTN_EMBED(attn_mha_page_js, "src/nn/mechanisms/mha/page.js");

constexpr MapKind kKinds[] = {{"mha", "multi-head attention"}};

class Mha final : public Mechanism {
 public:
  std::string_view name() const override { return "mha"; }
  std::string_view label() const override { return "multi-head attention"; }
  std::span<const OptionField> options() const override { return {}; }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    return std::make_unique<MhaMixer>(params, name, spec);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_mha_page_js); }
};

}  // namespace

const Mechanism& mechanism_mha() {
  static const Mha m;
  return m;
}

}  // namespace attn::nn
