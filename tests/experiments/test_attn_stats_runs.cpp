// experiments/attn_stats_runs.sh on tiny trained runs (OUT/<arch>/seed<S>):
// it writes each run's stats/<set>.best.json for the test set and its joined
// probes (made when missing), with per-sentence sums; skips a run without
// best.attn; a second call writes nothing and changes nothing; --archive
// copies them into the runs' archive. attn report
// then decides experiments/claims/attention.claims on them (every claim
// measured by both tests), and attn_stats_chart.py draws them from the run
// folders.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli/run_attn.h"
#include "../support.h"
#include "../train/tiny_corpus.h"

namespace fs = std::filesystem;
using namespace attn;
using nlohmann::json;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

int run_script(const std::string& args, const fs::path& log) {
  const std::string cmd =
      "cd " + test::shell_words({kRepo.string()}) + " && COMPARE_ATTN=" + std::getenv("ATTN_BIN") +
      " COMPARE_SRC=src COMPARE_TGT=tgt COMPARE_TEST=test2016 bash experiments/attn_stats_runs.sh " + args + " >>" +
      log.string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::map<std::string, std::string> stats_files(const fs::path& out) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(out))
    if (entry.is_regular_file() && entry.path().parent_path().filename() == "stats")
      files[entry.path().lexically_relative(out).string()] = test::slurp(entry.path());
  return files;
}

}  // namespace

TEST_CASE("attn_stats_runs.sh: stats files of every run with best.attn, resumable; report and chart read them",
          "[experiments][attn-stats][e2e]") {
  REQUIRE(std::getenv("ATTN_BIN") != nullptr);
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) ATTN_SKIP("python3 is not installed");
  test::ScratchDir dir;
  const fs::path data = dir / "data", out = dir / "cmp";
  fs::create_directories(data);
  test::write_tiny_corpus(data, "train", 60, 5);
  test::write_tiny_corpus(data, "valid", 5, 6);
  test::write_tiny_corpus(data, "test2016", 16, 9);  // probes ×2 and ×4: 8 and 4 lines
  std::string runs;
  for (const std::string arch : {"transformer", "transformer-wide", "muse"})
    for (const std::string seed : {"1", "2"}) {
      const std::string run = "cmp/" + arch + "/seed" + seed;
      std::vector<std::string> args = test::tiny_train_args(
          data, "../" + run, {"--max-updates", "2", "--arch", arch == "muse" ? "muse" : "transformer"});
      if (arch == "transformer-wide") *(std::find(args.begin(), args.end(), "--ffn-dim") + 1) = "48";
      *(std::find(args.begin(), args.end(), "--layers") + 1) = "2";  // the claims compare the last layer with the first
      *(std::find(args.begin(), args.end(), "--seed") + 1) = seed;
      const test::RunResult r = test::run_attn(test::shell_words(args));
      INFO(r.err);
      REQUIRE(r.status == 0);
      if (!fs::exists(out / arch / ("seed" + seed) / "best.attn"))
        fs::copy_file(out / arch / ("seed" + seed) / "last.attn", out / arch / ("seed" + seed) / "best.attn");
      runs += " " + (out / arch / ("seed" + seed)).string();
    }
  fs::create_directories(out / "muse" / "seed3");  // no model: skipped
  runs += " " + (out / "muse" / "seed3").string();
  const fs::path log = dir / "log";
  const std::string args = "--data " + data.string() + " --probes '2 4'" + runs;
  REQUIRE(run_script(args, log) == 0);
  INFO(test::slurp(log));
  const std::map<std::string, std::string> first = stats_files(out);
  REQUIRE(first.size() == 18);                             // 6 runs × (test2016, test2016.join2, test2016.join4)
  CHECK(fs::exists(out / "data" / "test2016.join4.src"));  // the probes, beside the runs as compare.sh keeps them
  const json doc = json::parse(first.at("transformer/seed1/stats/test2016.join2.best.json"));
  CHECK(doc["version"] == 2);
  CHECK(doc["sentences"] == 8);
  CHECK(doc["per_sentence"]["lines"] == 8);
  CHECK(test::slurp(log).find("muse/seed3: no best.attn, skipped") != std::string::npos);

  // Rerun: nothing to do, nothing changed.
  REQUIRE(run_script(args, log) == 0);
  CHECK(stats_files(out) == first);
  CHECK(test::slurp(log).find("0 written, 18 there already, 1 run(s) without best.attn") != std::string::npos);
  CHECK(run_script("--data " + (dir / "none").string() + runs, log) == 2);

  // --archive copies stats/ into the runs' archive (compare.sh --archive), where there is one.
  fs::create_directories(dir / "kept" / "muse" / "seed2");
  REQUIRE(run_script("--archive " + (dir / "kept").string() + " " + args, log) == 0);
  CHECK(test::slurp(dir / "kept" / "muse" / "seed2" / "stats" / "test2016.join4.best.json") ==
        first.at("muse/seed2/stats/test2016.join4.best.json"));
  CHECK_FALSE(fs::exists(dir / "kept" / "muse" / "seed1"));
  CHECK(test::slurp(log).find("muse/seed1: not archived in") != std::string::npos);

  // attn report decides the committed claims on them: every claim measured, by both tests.
  std::vector<std::string> report{"report"};
  for (const std::string arch : {"transformer", "transformer-wide", "muse"})
    for (const std::string seed : {"1", "2"}) report.push_back((out / arch / ("seed" + seed)).string());
  report.insert(report.end(), {"--claims", (kRepo / "experiments" / "claims" / "attention.claims").string(), "--json"});
  const test::RunResult r = test::run_attn(test::shell_words(report));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json verdicts = json::parse(r.out)["verdicts"];
  REQUIRE(verdicts["claims"].size() == 5);
  for (const json& c : verdicts["claims"]) {
    INFO(c.dump());
    CHECK(c["absent"].is_null());
    CHECK(c["seeds"] == json{1, 2});
    CHECK(c["pooled"].is_object());
    CHECK(c["seed_level"].is_object());
  }
  CHECK(verdicts["claims"][2]["ks"] == json{1, 2, 4});
  CHECK(verdicts["family"]["pooled"] == 5);

  // The chart from the run folders: a line per group and layer.
  const fs::path svg = dir / "entropy.svg";
  const std::string chart = "python3 " + (kRepo / "experiments" / "attn_stats_chart.py").string() + " " + svg.string() +
                            runs.substr(0, runs.rfind(' ')) + " --set test2016 >>" + log.string() + " 2>&1";
  CHECK(std::system(chart.c_str()) == 0);
  const std::string text = test::slurp(svg);
  CHECK(text.find("muse layer 0") != std::string::npos);
  CHECK(text.find("transformer layer 0") != std::string::npos);
}
