// Every subcommand's --help as a terminal shows it: lines no wider than the
// terminal (COLUMNS, or the default 100), numbers as typed (no float noise),
// on/off flags without CLI11's "{false}", options grouped by purpose, footers
// wrapped as whole paragraphs.
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include "app_under_test.h"
#include "attn/cli/help_format.h"
#include "run_attn.h"

namespace {

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// COLUMNS set (or unset) for one scope, and put back after.
class ColumnsVariable {
 public:
  explicit ColumnsVariable(const char* value) {
    if (const char* old = std::getenv("COLUMNS")) old_ = old;
    if (value)
      ::setenv("COLUMNS", value, 1);
    else
      ::unsetenv("COLUMNS");
  }
  ~ColumnsVariable() {
    if (old_)
      ::setenv("COLUMNS", old_->c_str(), 1);
    else
      ::unsetenv("COLUMNS");
  }
  ColumnsVariable(const ColumnsVariable&) = delete;
  ColumnsVariable& operator=(const ColumnsVariable&) = delete;

 private:
  std::optional<std::string> old_;
};

// `attn --help` and every subcommand's --help, as the app in process writes them.
std::vector<std::pair<std::string, std::string>> every_help() {
  const attn::test::AppUnderTest under_test;
  std::vector<std::pair<std::string, std::string>> helps{{"attn", under_test.app->help()}};
  for (const CLI::App* sub : under_test.subcommands()) helps.emplace_back(sub->get_name(), sub->help());
  return helps;
}

// The lines of `help` wider than `width` columns, one a line.
std::string lines_wider_than(const std::string& help, std::size_t width) {
  std::string wide;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);)
    if (columns(line) > width) wide += line + "\n";
  return wide;
}

}  // namespace

TEST_CASE("help: every subcommand's help fits the width, without float noise or {false}", "[cli][help]") {
  for (const char* width : {"80", "100", "60"}) {
    const ColumnsVariable columns_variable(width);
    REQUIRE(attn::cli::help_columns() == std::stoul(width));
    const auto helps = every_help();
    REQUIRE(helps.size() >= 10);
    // 0.10000000149011612 (a float printed as a double), 0.30000001, 1e-05 from a float's 0.00001.
    const std::regex noise(R"(\d\.\d*(0000000|9999999)\d*|\d\.\d{9,})");
    for (const auto& [name, help] : helps) {
      INFO("COLUMNS=" << width << " attn " << name << " --help:\n" << help);
      CHECK(lines_wider_than(help, std::stoul(width)).empty());
      CHECK(!std::regex_search(help, noise));
      CHECK(help.find("{false}") == std::string::npos);
      CHECK(help.find("{true}") == std::string::npos);
    }
  }
}

TEST_CASE("help: the width is COLUMNS when it holds one, else 100 off a terminal, and never below 40", "[cli][help]") {
  using attn::cli::help_columns;
  {
    const ColumnsVariable unset(nullptr);
    if (!::isatty(STDOUT_FILENO)) CHECK(help_columns() == attn::cli::kDefaultHelpColumns);
  }
  for (const char* junk : {"", "abc", "80x", "-5"}) {
    const ColumnsVariable columns_variable(junk);
    INFO("COLUMNS='" << junk << "'");
    if (!::isatty(STDOUT_FILENO)) CHECK(help_columns() == attn::cli::kDefaultHelpColumns);
  }
  const ColumnsVariable narrow("12");
  CHECK(help_columns() == attn::cli::kMinHelpColumns);
}

TEST_CASE("help: a footer's paragraph is wrapped whole, an example continues indented", "[cli][help]") {
  const ColumnsVariable columns_variable("80");
  const attn::test::AppUnderTest under_test;
  const std::string help = under_test.app->get_subcommand("report")->help();
  INFO(help);
  // The first paragraph fills its lines: no line of it ends far short of the width before the next goes on.
  const std::size_t start = help.find("Each RUN_DIR");
  REQUIRE(start != std::string::npos);
  std::istringstream lines(help.substr(start));
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  CHECK(columns(first) > 70);
  CHECK(second.rfind("score[.avg5]", 0) != 0);  // no fragment: the text runs on, not restarts a line
  // The long example wraps, its continuation further in than the command's start.
  CHECK(help.find("--claims\n      experiments/claims/cmp7.claims") != std::string::npos);
}

TEST_CASE("help: attn COMMAND --help honours COLUMNS in the binary", "[cli][help][e2e]") {
  const attn::test::AppUnderTest under_test;
  std::vector<std::string> commands{""};
  for (const CLI::App* sub : under_test.subcommands()) commands.push_back(sub->get_name());
  for (const char* width : {"80", "100"})
    for (const std::string& command : commands) {
      const attn::test::RunResult r =
          attn::test::run_attn(command + " --help", "", std::string("COLUMNS=") + width + " ");
      INFO("COLUMNS=" << width << " attn " << command << " --help:\n" << r.out << r.err);
      REQUIRE(r.status == 0);
      CHECK(r.out.find("Usage:") != std::string::npos);
      CHECK(lines_wider_than(r.out, std::stoul(width)).empty());
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
  CHECK(wrap_help("one two three", 12, 4, 8) == "one\n    two\n    three");
}
