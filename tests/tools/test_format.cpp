// dev/format.sh --check: every C and C++ source is laid out as clang-format 14
// lays it out with .clang-format (less .clang-format-ignore), so that no
// later reformat mixes layout into a change's diff. Without clang-format 14
// the script says it skipped, and the test is counted as skipped, not passed.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli/run_attn.h"
#include "../support.h"

namespace fs = std::filesystem;

namespace {
const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();
}

TEST_CASE("format: the sources match .clang-format (dev/format.sh --check)", "[tools][format][e2e]") {
  const fs::path log = fs::temp_directory_path() / ("attn-test-format." + std::to_string(::getpid()) + ".log");
  const std::string cmd = "bash " + (kRepo / "dev" / "format.sh").string() + " --check >" + log.string() + " 2>&1";
  const int raw_status = std::system(cmd.c_str());
  std::string output = attn::test::slurp(log);
  fs::remove(log);
  const int status = WIFEXITED(raw_status) ? WEXITSTATUS(raw_status) : -1;
  const std::string skipped = "format check skipped: ";
  if (status == 0 && output.find(skipped) != std::string::npos) {
    std::string reason = output.substr(output.find(skipped) + skipped.size());
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    ATTN_SKIP(reason);
  }
  INFO("dev/format.sh --check:\n" << output);
  CHECK(output.empty());
  REQUIRE(status == 0);
}
