// The Python tools run as part of the suite, so that a broken tool fails
// `make test` like any other defect.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../cli/run_attn.h"
#include "../support.h"

namespace {
const std::filesystem::path kRepo = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

TEST_CASE("tools: attn_stats_chart.py's unit tests pass (a line per model and layer, bad input)",
          "[tools][attn-stats][e2e]") {
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  const std::string cmd = "python3 " + (kRepo / "tests" / "tools" / "test_attn_stats_chart.py").string() +
                          " >/tmp/attn-test-attn-stats-chart.log 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("output: /tmp/attn-test-attn-stats-chart.log");
  REQUIRE(status == 0);
}
