// The experiment drivers' Python scripts run as part of the suite, so that a
// broken script fails `make test` like any other defect: compare_verdicts.py
// on the committed verdicts fixture, and migrate_run_layout.py on run
// directories of an older layout (attn report then reads them; a second call
// changes nothing; a run it cannot migrate stops it with nothing changed).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli/run_attn.h"
#include "../report/report_fixtures.h"
#include "../support.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

bool have_python() { return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

// Every file under `dir` with its bytes, by path relative to it.
std::map<std::string, std::string> tree_of(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().lexically_relative(dir).string()] = attn::test::slurp(entry.path());
  return files;
}

// Runs migrate_run_layout.py with `args`; its exit status.
int migrate(const std::string& args, const fs::path& log) {
  const std::string cmd = "python3 " + (kRepo / "experiments" / "migrate_run_layout.py").string() + " " + args + " >>" +
                          log.string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string score_json(double bleu, double chrf) {
  return "[\n{\n \"name\": \"BLEU\",\n \"score\": " + std::to_string(bleu) +
         "\n},\n{\n \"name\": \"chrF2\",\n \"score\": " + std::to_string(chrf) + "\n}\n]\n";
}

std::string score_text(const char* bleu, const char* chrf) {
  return std::string("BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-0.1.0 = ") + bleu +
         " 70.0/45.0/30.0/20.0 (BP = 1.000 ratio = 1.0 hyp_len = 10 ref_len = 10)\n"
         "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0 = " +
         chrf + "\n";
}

}  // namespace

TEST_CASE("experiments: compare_verdicts.py prints the tables and attn report's verdicts of a claims file",
          "[experiments][verdicts][e2e]") {
  if (!have_python()) {
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const fs::path f = kRepo / "tests" / "report" / "verdicts_fixture";
  const std::string log = "/tmp/attn-test-compare-verdicts.log";
  const std::string cmd =
      "python3 " + (kRepo / "experiments" / "compare_verdicts.py").string() + " " + (f / "single").string() +
      " --refs " + (f / "refs").string() + " --claims " + (f / "single.claims").string() + " --attn " + bin +
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

TEST_CASE("experiments: migrate_run_layout.py moves older runs into the run layout, once", "[experiments][report]") {
  if (!have_python()) {
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  using attn::test::write_file;
  attn::test::ScratchDir dir;
  const fs::path runs = dir.path() / "runs", log = dir.path() / "migrate.log";
  INFO("output: " << log.string());
  // A 20-then-60-minute quality run of the older script: budget score files (JSON and text) at the top,
  // its translations and averaged models beside them, /usr/bin/time's text in train.log.
  const fs::path quality = runs / "m30k" / "muse";
  fs::create_directories(quality);
  std::vector<nlohmann::json> records;
  for (int u = 1; u <= 20; ++u) records.push_back(attn::test::train_line(u, true));
  records.push_back(attn::test::valid_line(20, 25.0));
  write_file(quality / "log.jsonl", attn::test::lines_of(records));
  write_file(quality / "train.log", "\tMaximum resident set size (kbytes): 2221120\n");
  write_file(quality / "score.20min.json", score_json(34.93, 54.21));
  write_file(quality / "score.20min.txt", score_text("34.9", "54.2"));
  write_file(quality / "score.avg5.20min.json", score_json(35.5, 55.04));
  write_file(quality / "score.60min.json", score_json(40.98, 60.23));
  write_file(quality / "score.60min.txt", score_text("41.0", "60.2"));
  write_file(quality / "score.avg5.60min.json", score_json(39.9, 59.58));
  write_file(quality / "score.avg5.60min.txt", score_text("39.9", "59.6"));
  write_file(quality / "test2016.20min.hyp", "a\n");
  write_file(quality / "test2016.avg5.60min.hyp", "b\n");
  write_file(quality / "avg5.20min.attn", "model");
  // An archived comparison run: already the layout, but for the empty train.log the older archive kept.
  const fs::path seed = runs / "cmp" / "muse" / "seed1";
  fs::create_directories(seed / "score");
  fs::create_directories(seed / "hyp");
  write_file(seed / "log.jsonl", attn::test::lines_of(records));
  write_file(seed / "train.log", "");
  write_file(seed / "done", "");
  write_file(seed / "score" / "test2016.best.json", score_json(39.0, 58.0));
  write_file(seed / "hyp" / "test2016.best.txt", "c\n");

  const auto before = tree_of(runs);
  REQUIRE(migrate("--dry-run " + runs.string(), log) == 0);
  REQUIRE(tree_of(runs) == before);
  REQUIRE(migrate(runs.string(), log) == 0);
  const auto after = tree_of(quality);
  const std::map<std::string, std::string> want{
      {"log.jsonl", before.at("m30k/muse/log.jsonl")},
      {"train.log", before.at("m30k/muse/train.log")},
      {"score/test2016.best.json", before.at("m30k/muse/score.60min.json")},
      {"score/test2016.avg5.json", before.at("m30k/muse/score.avg5.60min.json")},
      {"score/test2016.best-20min.json", before.at("m30k/muse/score.20min.json")},
      {"score/test2016.avg5-20min.json", before.at("m30k/muse/score.avg5.20min.json")},
      {"hyp/test2016.best-20min.txt", "a\n"},
      {"hyp/test2016.avg5.txt", "b\n"},
      {"avg5-20min.attn", "model"}};
  REQUIRE(after == want);
  REQUIRE(tree_of(seed) == std::map<std::string, std::string>{{"log.jsonl", before.at("cmp/muse/seed1/log.jsonl")},
                                                              {"done", ""},
                                                              {"score/test2016.best.json", score_json(39.0, 58.0)},
                                                              {"hyp/test2016.best.txt", "c\n"}});
  // Once migrated, a second call changes nothing.
  const auto migrated = tree_of(runs);
  REQUIRE(migrate(runs.string(), log) == 0);
  REQUIRE(tree_of(runs) == migrated);
  REQUIRE(attn::test::slurp(log).find("0 of 2 runs changed, 2 in the run layout already") != std::string::npos);

  // attn report reads the migrated run's test scores: the last budget's.
  const auto r = attn::test::run_attn("report " + quality.string() + " --json");
  REQUIRE(r.status == 0);
  const nlohmann::json run = nlohmann::json::parse(r.out)["runs"][0];
  REQUIRE(run["test"]["set"] == "test2016");
  REQUIRE(run["test"]["best"]["bleu"] == 40.98);
  REQUIRE(run["test"]["avg5"]["chrf"] == 59.58);
  REQUIRE(run["peak_rss_mb"] == 120.0);  // the log's, not train.log's /usr/bin/time text

  // A text score without its JSON, or one that disagrees with it: exit status 2, no run changed.
  const fs::path text_only = runs / "text-only", differs = runs / "differs";
  fs::create_directories(text_only);
  fs::create_directories(differs);
  write_file(text_only / "log.jsonl", attn::test::lines_of(records));
  write_file(text_only / "score.60min.txt", score_text("41.0", "60.2"));
  write_file(text_only / "train.log", "");
  write_file(differs / "log.jsonl", attn::test::lines_of(records));
  write_file(differs / "score.60min.json", score_json(40.98, 60.23));
  write_file(differs / "score.60min.txt", score_text("40.9", "60.2"));
  const auto refused = tree_of(runs);
  for (const fs::path& bad : {text_only, differs}) {
    REQUIRE(migrate(runs.string() + " " + bad.string(), log) == 2);
    REQUIRE(tree_of(runs) == refused);
  }
  REQUIRE(attn::test::slurp(log).find("without its JSON twin score.60min.json") != std::string::npos);
  REQUIRE(attn::test::slurp(log).find("its scores differ from score.60min.json's") != std::string::npos);
}
