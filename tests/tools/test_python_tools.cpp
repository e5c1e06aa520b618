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

TEST_CASE("tools: compare_verdicts.py prints the tables and attn report's verdicts of a claims file",
          "[tools][verdicts][e2e]") {
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const std::filesystem::path f = kRepo / "tests" / "report" / "verdicts_fixture";
  const std::string log = "/tmp/attn-test-compare-verdicts.log";
  const std::string cmd =
      "python3 " + (kRepo / "tools" / "compare_verdicts.py").string() + " " + (f / "single").string() + " " +
      (f / "refs").string() + " --claims " + (f / "single.claims").string() + " --attn " + bin +
      " --order 'transformer muse' --memory fastdisa:transformer --long " + (f / "long").string() + " --long-claims " +
      (f / "long.claims").string() + " --param-match transformer-wide:muse --threads 1 >" + log + " 2>&1";
  INFO("output: " << log);
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string out = attn::test::slurp(log);
  // The tables in --order, the verdicts as attn report prints them, the memory and parameter lines.
  CHECK(out.find("| `transformer` | 3 | ") < out.find("| `muse` | 3 | "));
  CHECK(out.find("| MUSE beats the Transformer (muse beats transformer on test2016) | +5.55 |") != std::string::npos);
  CHECK(out.find("Verdicts of " + (f / "long.claims").string()) != std::string::npos);
  CHECK(out.find("| long/muse beats long/transformer on test2016.join8 | +12.10 |") != std::string::npos);
  CHECK(out.find("- fastdisa at less memory than transformer: **") != std::string::npos);
  CHECK(out.find("Parameter match: `transformer-wide` has 1,000 parameters, `muse` 1,000: 1.0000× (within 1%).") !=
        std::string::npos);
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
