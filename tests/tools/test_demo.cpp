// make demo (tools/demo.sh), run small: its run must be one attn report can
// read whole, scores included, and it must end by saying what to try next.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../cli/run_attn.h"
#include "../support.h"

namespace {
const std::filesystem::path kRepo = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

TEST_CASE("demo: attn report finds the demo run's test score; the demo ends with what to try next",
          "[tools][demo][e2e]") {
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);  // set by `make test`
  const std::filesystem::path attn = std::filesystem::absolute(bin);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attn-test-demo";
  std::filesystem::remove_all(dir);
  const std::filesystem::path log = dir.string() + ".log";
  const std::string cmd = "ATTN=" + attn.string() + " DEMO_DIR=" + dir.string() +
                          " DEMO_TRAIN_FLAGS='--dim 32 --ffn-dim 64 --heads 2 --layers 1 --vocab-size 300 "
                          "--max-tokens 1000 --max-updates 20 --log-every 10 --threads 2 --quiet' bash " +
                          (kRepo / "tools" / "demo.sh").string() + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string output = attn::test::slurp(log);
  INFO("demo output:\n" << output);
  REQUIRE(status == 0);

  const attn::test::RunResult report = attn::test::run_attn("report --json " + dir.string());
  INFO("report stderr: " << report.err);
  REQUIRE(report.status == 0);
  const nlohmann::json run = nlohmann::json::parse(report.out).at("runs").at(0);
  REQUIRE(run.at("test").is_object());  // null is the page's "not scored"
  REQUIRE(run.at("test").at("best").at("bleu").is_number());
  REQUIRE(std::filesystem::exists(dir / "hyp" / "test.best.txt"));  // the run layout: the translation beside its score

  const std::size_t next = output.find("== what to try next\n");
  REQUIRE(next != std::string::npos);
  const std::string tail = output.substr(next);
  const auto lines = attn::test::count_occurrences(tail, "\n") - 1;
  CHECK(lines >= 3);
  CHECK(lines <= 5);
  for (const char* command : {"attn translate", "attn attend", "attn serve", "attn report", "docs/"})
    CHECK(tail.find(command) != std::string::npos);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(log);
}
