#include "attn/core/stop_signals.h"

#include <csignal>

namespace attn {

std::span<const int> stop_signals() {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  return kSignals;
}

}  // namespace attn
