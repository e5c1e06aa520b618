// Multi-head attention (Vaswani et al. 2017): the baseline, global in the
// encoder, causal in the decoder. No options, no extras.
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/mha/mha_mixer.h"

namespace attn::nn {

namespace {

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
  std::string_view page_note() const override {
    return R"JS((e, comp) => comp === "cross" ? "Cross-attention: each target position attends to the encoder's output over the source tokens." :
  comp === "decoder" ? "Causal self-attention: position i sees positions ≤ i. Rows are the predicted tokens; columns the tokens read (<s> first)." :
  "Multi-head attention: softmax(QKᵀ/√d_h) over the sentence's tokens.")JS";
  }
};

}  // namespace

const Mechanism& mechanism_mha() {
  static const Mha m;
  return m;
}

}  // namespace attn::nn
