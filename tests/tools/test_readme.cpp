// The README's commands run verbatim on a fresh clone: each line of its code
// blocks names a real make target, attn subcommand and flags, or script of
// the repository (the long ones are not run here).
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/app_under_test.h"
#include "../cli/run_attn.h"
#include "../support.h"
#include "attn/model/presets.h"
#include "attn/serve/http_rules.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

// The commands of the Markdown file's code blocks (indented by 4 or fenced by ```),
// continuation lines joined and comments dropped.
std::vector<std::string> code_block_commands(const std::string& markdown) {
  std::vector<std::string> commands;
  std::istringstream lines(markdown);
  std::string pending;
  bool fenced = false, previous_blank = true, indented = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    const bool blank = line.find_first_not_of(' ') == std::string::npos;
    indented = !fenced && line.rfind("    ", 0) == 0 && (previous_blank || indented) && !blank;
    previous_blank = blank;
    if (!fenced && !indented) continue;
    std::string text = line;
    const std::size_t comment = text.find(" #");
    if (comment != std::string::npos) text.erase(comment);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    const bool continues = !text.empty() && text.back() == '\\';
    if (continues) text.pop_back();
    pending += text + " ";
    if (!continues) {
      if (pending.find_first_not_of(' ') != std::string::npos) commands.push_back(pending);
      pending.clear();
    }
  }
  return commands;
}

std::vector<std::string> words(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool is_make_target(const std::string& target) {
  const std::string makefile = attn::test::slurp(kRepo / "Makefile");
  return std::regex_search(makefile, std::regex("(^|\\n)" + target + ":"));
}

}  // namespace

TEST_CASE("README: every command in its code blocks names a real target, subcommand, flag or script",
          "[tools][readme]") {
  const std::string readme = attn::test::slurp(kRepo / "README.md");
  REQUIRE(!readme.empty());
  const std::vector<std::string> commands = code_block_commands(readme);
  REQUIRE(commands.size() >= 8);
  const attn::test::AppUnderTest under_test;
  CLI::App* app = under_test.app.get();
  const std::regex assignment(R"([A-Za-z_][A-Za-z0-9_]*=\S+)");
  for (const std::string& command : commands) {
    INFO("README command: " << command);
    std::vector<std::string> w = words(command);
    if (std::regex_match(w[0], assignment) && w.size() == 1) continue;  // M=data/multi30k
    if (w[0] == "head") {  // head -n N FILE | COMMAND: a few lines of a file, then the command is checked
      const std::size_t pipe = command.find(" | ");
      REQUIRE(pipe != std::string::npos);
      w = words(command.substr(pipe + 3));
    }
    if (w[0] == "make") {
      REQUIRE(w.size() >= 2);
      for (std::size_t i = 1; i < w.size(); ++i)
        if (w[i].find('=') == std::string::npos) CHECK(is_make_target(w[i]));
    } else if (w[0] == "./attn") {
      REQUIRE(w.size() >= 2);
      const std::vector<CLI::App*> subs = app->get_subcommands([&](CLI::App* s) { return s->get_name() == w[1]; });
      REQUIRE(subs.size() == 1);
      const CLI::App* sub = subs[0];
      for (std::size_t i = 2; i < w.size(); ++i) {
        if (w[i].size() < 2 || w[i][0] != '-') continue;
        const std::string flag = w[i].substr(0, w[i].find('='));
        INFO("flag " << flag);
        CHECK(sub->get_option_no_throw(flag) != nullptr);
      }
    } else if (w[0].rfind("tools/", 0) == 0) {
      const fs::path script = kRepo / w[0];
      CHECK(fs::exists(script));
      CHECK((fs::status(script).permissions() & fs::perms::owner_exec) != fs::perms::none);
    } else if (w[0] == "curl") {
      // A request to attn serve: a route the server has, and a body that is JSON.
      const auto url =
          std::find_if(w.begin(), w.end(), [](const std::string& x) { return x.find(":8080/") != std::string::npos; });
      REQUIRE(url != w.end());
      CHECK(attn::serve::route_of(url->substr(url->find(":8080/") + 5)).has_value());
      const std::size_t body = command.find("-d '");
      REQUIRE(body != std::string::npos);
      const std::string json = command.substr(body + 4, command.rfind('\'') - body - 4);
      CHECK(nlohmann::json::accept(json));
    } else if (w[0] == "git") {
      CHECK(w.at(1) == "clone");  // the corpus, from its own repository
    } else {
      FAIL("a command the check does not know: teach tests/tools/test_readme.cpp what makes it valid");
    }
  }
}

TEST_CASE("README: every row of a table headed `--arch` names an arch attn train takes, and real flags",
          "[tools][readme]") {
  const std::string readme = attn::test::slurp(kRepo / "README.md");
  const attn::test::AppUnderTest under_test;
  const CLI::App* train = under_test.app->get_subcommand("train");
  std::istringstream lines(readme);
  bool in_arch_table = false;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `--arch`", 0) == 0) {
      in_arch_table = true;
      continue;
    }
    if (line.rfind("|", 0) != 0) in_arch_table = false;
    if (!in_arch_table || line.rfind("| ---", 0) == 0) continue;
    // "| `transformer --ffn-dim 1184` (wide) | …": the first cell's code span is what follows --arch.
    const std::size_t open = line.find('`'), close = line.find('`', open + 1);
    REQUIRE(close != std::string::npos);
    const std::vector<std::string> w = words(line.substr(open + 1, close - open - 1));
    INFO("README row: " << line);
    CHECK(attn::model::is_known_arch(w.at(0)));
    for (std::size_t i = 1; i < w.size(); ++i)
      if (w[i].rfind("--", 0) == 0) CHECK(train->get_option_no_throw(w[i]) != nullptr);
    ++rows;
  }
  CHECK(rows >= 7);
}

TEST_CASE("README: at most 150 lines", "[tools][readme]") {
  const std::string readme = attn::test::slurp(kRepo / "README.md");
  REQUIRE(attn::test::count_occurrences(readme, "\n") <= 150);
}
