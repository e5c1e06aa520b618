// Every numeric flag of every subcommand is validated while parsing (issue
// 21 item 8): range and finiteness, one line naming the flag. Parsed in
// process on the real app (cli/commands.h make_app); nothing runs.
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/nn/mechanism.h"
#include "app_under_test.h"

namespace {

// What a subcommand needs besides the flag under test, the flag going first
// (positionals last).
struct Command {
  const char* name;
  const char* required;
};
constexpr Command kCommands[] = {{"train", ""},
                                 {"translate", "-m m.attn"},
                                 {"attend", "-m m.attn"},
                                 {"score", "-r ref"},
                                 {"info", "m.attn"},
                                 {"average", "a.attn -o b.attn"},
                                 {"quantize", "a.attn -o b.attn"},
                                 {"report", "run"},
                                 {"serve", "-m m.attn"},
                                 {"attn-stats", "-m m.attn"},
                                 {"export", "--to ctranslate2 m.attn out"}};

// One line per numeric flag: a value just outside its range and one just inside.
struct Row {
  const char* command;
  const char* flag;
  const char* bad;
  const char* good;
};
constexpr Row kRows[] = {
    {"train", "--threads", "-1", "0"},
    {"train", "--layers", "0", "1"},
    {"train", "--enc-layers", "0", "1"},
    {"train", "--dec-layers", "-2", "1"},
    {"train", "--dim", "0", "8"},
    {"train", "--ffn-dim", "0", "1"},
    {"train", "--heads", "0", "1"},
    {"train", "--dropout", "1", "0"},
    {"train", "--activation-dropout", "-0.1", "0.99"},
    {"train", "--attention-dropout", "1", "0"},
    {"train", "--vocab-size", "299", "300"},
    {"train", "--max-len", "0", "1"},
    {"train", "--join-pairs", "0", "1"},
    {"train", "--drop-final-stop", "1.5", "1"},
    {"train", "--max-tokens", "0", "1"},
    {"train", "--update-freq", "0", "1"},
    {"train", "--max-epochs", "-1", "0"},
    {"train", "--max-updates", "-1", "0"},
    {"train", "--max-time", "-1", "0"},
    {"train", "--valid-every", "-1", "0"},
    {"train", "--patience", "-1", "0"},
    {"train", "--skip-bad-batches", "-1", "0"},
    {"train", "--label-smoothing", "1.5", "0"},
    {"train", "--lr", "0", "1e-9"},
    {"train", "--warmup", "-10", "0"},
    {"train", "--clip-norm", "-1", "0"},
    {"train", "--weight-decay", "-1", "0"},
    {"train", "--seed", "-1", "0"},
    {"train", "--keep-last", "-1", "0"},
    {"train", "--log-every", "0", "1"},
    {"translate", "--threads", "-1", "1"},
    {"translate", "--beam", "0", "1"},
    {"translate", "--lenpen", "-1", "0"},
    {"translate", "--max-len-a", "-1", "0"},
    {"translate", "--max-len-b", "1e30", "0"},
    {"translate", "--no-repeat-ngram-size", "-1", "3"},
    {"translate", "--nbest", "0", "1"},
    {"translate", "--batch-size", "0", "1"},
    {"translate", "--max-input-len", "0", "1"},
    {"translate", "--decoders", "-1", "0"},
    {"attend", "--threads", "-1", "1"},
    {"attend", "--precision", "10", "9"},
    {"attend", "--beam", "0", "1"},
    {"attend", "--lenpen", "11", "10"},
    {"attend", "--max-len-a", "1001", "1000"},
    {"attend", "--max-len-b", "-5", "5"},
    {"attend", "--no-repeat-ngram-size", "1001", "0"},
    {"attend", "--batch-size", "0", "1"},
    {"attend", "--max-input-len", "-1", "1"},
    {"score", "--threads", "-1", "1"},
    {"score", "--smooth-value", "-1", "0"},
    {"score", "--chrf-char-order", "0", "1"},
    {"score", "--chrf-word-order", "-1", "2"},
    {"score", "--chrf-beta", "-1", "0"},
    {"score", "--paired-bs-n", "0", "1"},
    {"score", "--paired-ar-n", "0", "1"},
    {"score", "--seed", "-1", "0"},
    {"score", "--width", "18", "17"},
    {"attn-stats", "--threads", "-1", "1"},
    {"attn-stats", "--within", "-1", "0"},
    {"attn-stats", "--beam", "0", "1"},
    {"attn-stats", "--lenpen", "11", "10"},
    {"attn-stats", "--max-len-a", "1001", "1000"},
    {"attn-stats", "--max-len-b", "-5", "5"},
    {"attn-stats", "--no-repeat-ngram-size", "-2", "2"},
    {"export", "--threads", "-1", "1"},
    {"attn-stats", "--batch-size", "0", "1"},
    {"attn-stats", "--max-input-len", "0", "1"},
    {"info", "--threads", "-1", "1"},
    {"average", "--threads", "-1", "1"},
    {"average", "--last", "0", "1"},
    {"quantize", "--threads", "-1", "1"},
    {"report", "--threads", "-1", "1"},
    {"serve", "--threads", "-1", "1"},
    {"serve", "--port", "65536", "0"},
    {"serve", "--decoders", "0", "1"},
    {"serve", "--max-batch", "0", "1"},
    {"serve", "--max-wait-ms", "-1", "0"},
    {"serve", "--max-queue", "0", "1"},
    {"serve", "--max-sentences", "0", "1"},
    {"serve", "--max-input-len", "0", "1"},
    {"serve", "--max-body", "1023", "1024"},
    {"serve", "--max-beam", "0", "1"},
    {"serve", "--timeout", "0", "0.001"},
    {"serve", "--connections", "0", "1"},
    {"serve", "--workers", "0", "1"},
    {"serve", "--max-work", "0", "1"},
    {"serve", "--read-timeout", "0.01", "0.05"},
    {"serve", "--drain-timeout", "-1", "0"},
};

// Parses `attn COMMAND FLAG VALUE REQUIRED` on a fresh app; the error's text,
// or "" when it parsed.
std::string parse_error(const std::string& command, const std::string& flag, const std::string& value) {
  const attn::test::AppUnderTest under_test;
  CLI::App* app = under_test.app.get();
  std::string required;
  for (const Command& c : kCommands)
    if (command == c.name) required = c.required;
  // CLI11 takes the arguments last first.
  std::vector<std::string> args{command, flag, value};
  std::istringstream words(required);
  for (std::string word; words >> word;) args.push_back(word);
  std::reverse(args.begin(), args.end());
  try {
    app->parse(args);
  } catch (const CLI::ParseError& e) {
    return std::string(e.what()).empty() ? "?" : e.what();
  } catch (const attn::Error& e) {
    return e.what();
  }
  return "";
}

bool has_bounds(CLI::Option& option) {
  try {
    option.get_validator(attn::cli::kBoundsName);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

bool is_numeric(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  for (const char* prefix : {"INT", "UINT", "FLOAT", "NUMBER"})
    if (type.rfind(prefix, 0) == 0) return true;
  return false;
}

// A mechanism option's flag: its checks are its module's table (nn/mechanism.h), tested below.
bool is_mechanism_flag(const CLI::Option& option) {
  for (const attn::nn::Mechanism* mechanism : attn::nn::mechanisms())
    for (const attn::nn::OptionField& field : mechanism->options())
      if (field.flag == "--" + option.get_lnames().at(0)) return true;
  return false;
}

}  // namespace

TEST_CASE("flags: every numeric flag of every subcommand has bounds and a row in the table", "[cli][flags]") {
  const attn::test::AppUnderTest under_test;
  std::set<std::string> rows;
  for (const Row& row : kRows) rows.insert(std::string(row.command) + " " + row.flag);
  std::size_t numeric = 0;
  for (CLI::App* sub : under_test.subcommands()) {
    for (CLI::Option* option : sub->get_options([](CLI::Option* o) { return o->get_group() != ""; })) {
      if (!is_numeric(*option) && !has_bounds(*option)) continue;
      if (is_mechanism_flag(*option)) continue;
      ++numeric;
      const std::string name = sub->get_name() + " --" + option->get_lnames().at(0);
      INFO(name << " (" << option->get_type_name() << ")");
      CHECK(has_bounds(*option));
      CHECK(rows.count(name) == 1);
    }
  }
  CHECK(numeric == std::size(kRows));
}

TEST_CASE("flags: out of range, NaN, infinite and non-numbers are refused naming the flag", "[cli][flags]") {
  for (const Row& row : kRows) {
    INFO(row.command << " " << row.flag);
    CHECK(parse_error(row.command, row.flag, row.good).empty());
    for (const std::string& bad : {std::string(row.bad), std::string("nan"), std::string("inf"), std::string("-inf"),
                                   std::string("1e300"), std::string("-1e300"), std::string("abc"), std::string("")}) {
      INFO("value '" << bad << "'");
      const std::string error = parse_error(row.command, row.flag, bad);
      CHECK(error.find(row.flag) != std::string::npos);
    }
  }
}

TEST_CASE("flags: every mechanism option refuses NaN, infinities and non-numbers naming its flag", "[cli][flags]") {
  for (const attn::nn::Mechanism* mechanism : attn::nn::mechanisms())
    for (const attn::nn::OptionField& option : mechanism->options()) {
      if (option.type == attn::nn::OptionType::boolean || option.type == attn::nn::OptionType::text) continue;
      for (const char* bad : {"nan", "inf", "abc", "", "1e300"}) {
        INFO(option.flag << " " << bad);
        CHECK(parse_error("train", std::string(option.flag), bad).find(option.flag) != std::string::npos);
      }
    }
}

TEST_CASE("flags: a mechanism option's NaN or infinity is echoed as typed, never as JSON's null", "[cli][flags]") {
  for (const char* bad : {"nan", "inf", "-inf", "NaN"}) {
    INFO(bad);
    const std::string error = parse_error("train", "--muse-tap-dropout", bad);
    CHECK(error.find("(got '" + std::string(bad) + "')") != std::string::npos);
    CHECK(error.find("null") == std::string::npos);
  }
}

TEST_CASE("flags: the bounds accept their ends and refuse what is just outside", "[cli][flags]") {
  using attn::cli::allows;
  const attn::cli::Bounds closed = attn::cli::within(1, 64), open = attn::cli::above(0, 10);
  CHECK(allows(closed, "1"));
  CHECK(allows(closed, "64"));
  CHECK_FALSE(allows(closed, "0.999"));
  CHECK_FALSE(allows(closed, "64.001"));
  CHECK_FALSE(allows(open, "0"));
  CHECK(allows(open, "1e-30"));
  CHECK(allows(attn::cli::probability, "0"));
  CHECK_FALSE(allows(attn::cli::probability, "1"));
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999", "", " 1", "1 ", "0x", "1,5"}) {
    INFO(bad);
    CHECK_FALSE(allows(closed, bad));
  }
}
