// The one list of mechanism modules (nn/mechanism.h). Each module's folder
// defines its `const Mechanism& mechanism_<name>()` in mechanism.cpp; a new
// mechanism is one declaration and one entry here.
#include "attn/nn/mechanism.h"

namespace attn::nn {

const Mechanism& mechanism_mha();
const Mechanism& mechanism_csan();
const Mechanism& mechanism_muse();
const Mechanism& mechanism_fast_disa();
const Mechanism& mechanism_disa();
const Mechanism& mechanism_lightconv();
const Mechanism& mechanism_dynamicconv();

std::span<const Mechanism* const> mechanisms() {
  static const Mechanism* const all[] = {
      &mechanism_mha(),          // multi-head attention (the Transformer's)
      &mechanism_csan(),         // ConvSAN's windowed self-attention
      &mechanism_muse(),         // MUSE: attention beside dynamic convolutions
      &mechanism_fast_disa(),    // Fast-DiSA: directional feature-wise self-attention
      &mechanism_disa(),         // DiSA (DiSAN), Fast-DiSA's yardstick
      &mechanism_lightconv(),    // LightConv
      &mechanism_dynamicconv(),  // DynamicConv
  };
  return all;
}

}  // namespace attn::nn
