// The one list of mechanism modules (nn/mechanism.h). A new mechanism is one
// more X(name) here, matching its `const Mechanism& mechanism_<name>()`.
#include "attn/nn/mechanism.h"

#define ATTN_MECHANISMS(X) X(mha) X(csan) X(muse) X(fast_disa) X(disa) X(lightconv) X(dynamicconv)

namespace attn::nn {

#define ATTN_DECLARE(name) const Mechanism& mechanism_##name();
ATTN_MECHANISMS(ATTN_DECLARE)
#undef ATTN_DECLARE

std::span<const Mechanism* const> mechanisms() {
#define ATTN_LIST(name) &mechanism_##name(),
  static const Mechanism* const all[] = {ATTN_MECHANISMS(ATTN_LIST)};
#undef ATTN_LIST
  return all;
}

}  // namespace attn::nn
