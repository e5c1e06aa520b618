// Every subcommand's --help as a terminal shows it: lines of at most 100
// columns, numbers as typed (no float noise), on/off flags without CLI11's
// "{false}", options grouped by purpose.
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "app_under_test.h"
#include "attn/cli/help_format.h"

namespace {

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("help: every subcommand's help fits 100 columns, without float noise or {false}", "[cli][help]") {
  const attn::test::AppUnderTest under_test;
  std::vector<std::pair<std::string, std::string>> helps{{"attn", under_test.app->help()}};
  for (const CLI::App* sub : under_test.subcommands()) helps.emplace_back(sub->get_name(), sub->help());
  REQUIRE(helps.size() >= 10);
  // 0.10000000149011612 (a float printed as a double), 0.30000001, 1e-05 from a float's 0.00001.
  const std::regex noise(R"(\d\.\d*(0000000|9999999)\d*|\d\.\d{9,})");
  for (const auto& [name, help] : helps) {
    INFO(name << " --help:\n" << help);
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
      INFO(line);
      CHECK(columns(line) <= attn::cli::kHelpColumns);
      CHECK(!std::regex_search(line, noise));
      CHECK(line.find("{false}") == std::string::npos);
      CHECK(line.find("{true}") == std::string::npos);
    }
  }
}

TEST_CASE("help: train groups its options by purpose and types the mechanism flags", "[cli][help]") {
  const attn::test::AppUnderTest under_test;
  const std::string help = under_test.app->get_subcommand("train")->help();
  INFO(help);
  for (const char* group : {"\nData:", "\nModel (", "\nMechanisms (",
                            "\nTraining:", "\nValidation and stopping:", "\nOutput:", "\nResources:"})
    CHECK(help.find(group) != std::string::npos);
  CHECK(help.find("--csan-window INT") != std::string::npos);
  CHECK(help.find("--muse-kernels INT,...") != std::string::npos);
  CHECK(help.find("--muse-tap-dropout FLOAT") != std::string::npos);
  CHECK(help.find("(preset: 0.1)") != std::string::npos);
  CHECK(help.find("fusion gate (preset: on)") != std::string::npos);
}

TEST_CASE("help: wrap_help breaks at spaces, indents continuation lines and counts UTF-8 as columns", "[cli][help]") {
  using attn::cli::wrap_help;
  CHECK(wrap_help("one two three", 9, 0) == "one two\nthree");
  CHECK(wrap_help("one two three", 12, 4) == "one two\n    three");
  CHECK(wrap_help("±±± ±±±", 7, 0) == "±±± ±±±");
  CHECK(wrap_help("a\nb", 80, 2) == "a\n  b");
  CHECK(wrap_help("unbreakable-word", 4, 0) == "unbreakable-word");
}
