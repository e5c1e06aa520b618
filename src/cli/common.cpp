#include <CLI/CLI.hpp>

#include "attn/cli/commands.h"

namespace attn::cli {

void add_common_options(CLI::App& sub, CommonOptions& common) {
  sub.add_option("--threads", common.threads, "OpenMP threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace attn::cli
