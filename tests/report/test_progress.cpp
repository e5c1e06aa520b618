// The progress line of translate and attend: the sentence counter's text
// (counts, rate, time left), drawn on a terminal only (script(1) gives the
// command one), never into a file.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../cli/run_attn.h"
#include "../support.h"
#include "report_fixtures.h"
#include "attn/core/progress.h"

using namespace attn;
using attn::test::run_attn;
using attn::test::write_model;
namespace fs = std::filesystem;

TEST_CASE("progress: the sentence counter's text, and translate and attend draw it on a terminal only",
          "[report][cli][e2e]") {
  REQUIRE(count_progress_text("sentences", 1200, 3000, 40.0) ==
          "1,200/3,000 sentences (40%) | 30.0 sentences/s | ETA 0:01:00");
  REQUIRE(count_progress_text("sentences", 3000, 3000, 100.0) ==
          "3,000/3,000 sentences (100%) | 30.0 sentences/s | 0:01:40");
  REQUIRE(count_progress_text("sentences", 0, 10, 0.0) == "0/10 sentences (0%) | 0.0 sentences/s | ETA ?");
  REQUIRE(format_count(1234567) == "1,234,567");
  REQUIRE(format_count(-999) == "-999");

  test::ScratchDir dir;
  write_model(dir.path() / "m.attn", "transformer");
  std::string input;
  for (int i = 0; i < 30; ++i) input += "a small dog sleeps .\n";
  const std::string src = dir.write("in.txt", input);
  const std::string model = (dir.path() / "m.attn").string();
  const std::string translate = "translate -m " + model + " -i " + src + " -o " + (dir.path() / "out.txt").string() +
                                " --max-len-b 5 --threads 1";
  const std::string attend = "attend -m " + model + " -i " + src + " -o " + (dir.path() / "maps.json").string() +
                             " --max-len-b 5 --threads 1";
  for (const std::string& args : {translate, attend}) {
    INFO(args);
    const auto quiet = run_attn(args);  // stderr is a file: no progress line
    REQUIRE(quiet.status == 0);
    REQUIRE(quiet.err.find("sentences/s") == std::string::npos);
    // On a terminal (script(1) gives the command a pseudo-terminal): the line, ending at 30/30.
    if (!fs::exists("/usr/bin/script")) {
      WARN("script(1) is not installed: the terminal half of the progress test is skipped");
      continue;
    }
    const fs::path typed = dir.path() / "tty.txt";
    const std::string cmd = "script -qec \"" + std::string(std::getenv("ATTN_BIN")) + " " + args + "\" /dev/null >" +
                            typed.string() + " 2>&1 </dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string screen = test::slurp(typed);
    INFO("terminal: " << screen);
    REQUIRE(test::count_occurrences(screen, "30/30 sentences (100%)") == 1);  // the final count is drawn once
    REQUIRE(screen.find("\r\033[K") != std::string::npos);
  }
}
