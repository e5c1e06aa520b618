// The files attn report reads in a run directory, each on its own: the log
// parser keeps the last line per update (a resumed run's lines win, a run
// started again from scratch counts alone) and notes corrupt and unfinished
// lines; the median training speed; sacreBLEU's score files (JSON and text,
// a budget's and compare.sh's score/ folder); /usr/bin/time's peak memory;
// the plots' axis ticks.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../support.h"
#include "report_fixtures.h"
#include "attn/report/chart.h"
#include "attn/report/run_summary.h"

using namespace attn;
using attn::test::lines_of;
using attn::test::train_line;
using attn::test::valid_line;
using attn::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("report: the log parser keeps the last line per update, and notes corrupt and unfinished lines", "[report]") {
  SECTION("a resume that repeats updates: the resumed process's lines win") {
    std::vector<json> lines;
    for (int u = 1; u <= 6; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(6, 12.0));
    json again = train_line(5, false);  // resumed from update 4: 5 and 6 again, then on
    again["loss"] = 1.0;
    lines.push_back(again);
    for (int u = 6; u <= 8; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(8, 13.0));
    const report::ParsedLog log = report::parse_log(lines_of(lines));
    REQUIRE(log.train.size() == 8);
    for (std::size_t i = 0; i < log.train.size(); ++i) REQUIRE(log.train[i].update == static_cast<std::int64_t>(i + 1));
    REQUIRE(*log.train[4].loss == 1.0);
    REQUIRE(log.superseded == 3);  // train 5 and 6, and the validation at 6 the earlier process logged after them
    REQUIRE(log.valid.size() == 1);
    REQUIRE(log.valid[0].update == 8);
    REQUIRE(log.notes.size() == 1);
    REQUIRE(log.notes[0].find("resumed") != std::string::npos);
  }
  SECTION("a run started again from scratch in the same directory: only the new run's lines count") {
    std::vector<json> lines;
    for (int u = 1; u <= 6; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(3, 12.0));
    lines.push_back(valid_line(6, 13.0));
    for (int u = 1; u <= 2; ++u) lines.push_back(train_line(u, false));
    const report::ParsedLog log = report::parse_log(lines_of(lines));
    REQUIRE(log.train.size() == 2);
    REQUIRE(log.valid.empty());
    REQUIRE(log.superseded == 8);
  }
  SECTION("corrupt lines are skipped with one note; an unfinished last line gets its own") {
    const std::string text = train_line(1, false).dump() + "\nnot json at all\n" + train_line(2, false).dump() +
                             "\n{\"split\": \"train\", \"upd\n\n" + "{\"split\": \"valid\"}\n" +
                             train_line(3, false).dump() + "\n" + train_line(4, false).dump().substr(0, 40);
    const report::ParsedLog log = report::parse_log(text);
    REQUIRE(log.train.size() == 3);
    REQUIRE(log.notes.size() == 2);
    REQUIRE(log.notes[0] == "log.jsonl: 3 lines are not a JSON log record (the first is line 2); skipped");
    REQUIRE(log.notes[1].find("unfinished") != std::string::npos);
  }
  SECTION("an empty log") {
    const report::ParsedLog log = report::parse_log("");
    REQUIRE(log.lines == 0);
    REQUIRE(log.train.empty());
    REQUIRE(log.notes.empty());
  }
}

TEST_CASE("report: median tokens/s, score files, /usr/bin/time's peak, axis ticks", "[report]") {
  std::vector<report::LogEntry> train;
  for (int u = 1; u <= 40; ++u) train.push_back({"train", u, 1.5 * u, {}, {}, {}, {}, 1000.0 + 10.0 * u});
  REQUIRE(*report::median_tokens_per_s(train) == 1225.0);  // updates 5..40: 1050..1400, even count
  train.resize(3);                                         // nothing past 10% of update 3 but updates 1..3 themselves
  REQUIRE(*report::median_tokens_per_s(train) == 1020.0);
  REQUIRE_FALSE(report::median_tokens_per_s({}).has_value());

  const auto json_score =
      report::parse_score_file(R"([{"name": "BLEU", "score": 37.6}, {"name": "chrF2", "score": 57.8}])");
  REQUIRE(json_score);
  REQUIRE(*json_score->bleu == 37.6);
  REQUIRE(*json_score->chrf == 57.8);
  const auto single = report::parse_score_file(R"({"name": "BLEU", "score": 12.5})");
  REQUIRE((single && *single->bleu == 12.5 && !single->chrf));
  const auto text_score =
      report::parse_score_file("BLEU|nrefs:1|tok:13a = 37.6 72.1/47.8 (BP = 0.948)\nchrF2|nrefs:1 = 57.8\n");
  REQUIRE(text_score);
  REQUIRE(*text_score->bleu == 37.6);
  REQUIRE(*text_score->chrf == 57.8);
  REQUIRE_FALSE(report::parse_score_file("37.6\n57.8\n"));  // --score-only: which is which is unknown
  REQUIRE_FALSE(report::parse_score_file("[garbage"));

  REQUIRE(*report::parse_time_peak_rss_mb(
              "Maximum resident set size (kbytes): 2048\nMaximum resident set size (kbytes): 1024\n") == 2.0);
  REQUIRE_FALSE(report::parse_time_peak_rss_mb("nothing here"));

  REQUIRE(report::linear_ticks(0, 3365, 5) == std::vector<double>{0, 500, 1000, 1500, 2000, 2500, 3000, 3500});
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{2.4, 9.5}, {0.0, 0.37}, {5.26, 148.0}, {3, 3}}) {
    const std::vector<double> ticks = report::linear_ticks(lo, hi, 5);
    INFO(lo << ".." << hi);
    REQUIRE(ticks.size() >= 3);
    REQUIRE(ticks.size() <= 11);
    REQUIRE(ticks.front() <= lo);
    REQUIRE(ticks.back() >= hi);
    for (std::size_t i = 2; i < ticks.size(); ++i)
      REQUIRE(std::abs((ticks[i] - ticks[i - 1]) - (ticks[1] - ticks[0])) < 1e-9 * std::max(1.0, hi));
  }
}

// tools/compare.sh scores into score/<set>.<model>.json, the long-input probes beside the test set.
TEST_CASE("report: a compare.sh run's test scores come from score/, the plain test set's, not a probe's", "[report]") {
  test::ScratchDir dir;
  const fs::path run = dir.path() / "seed1";
  fs::create_directories(run / "score");
  std::vector<json> log;
  for (int u = 1; u <= 10; ++u) log.push_back(train_line(u, true));
  write_file(run / "log.jsonl", lines_of(log));
  const auto score = [](double bleu, double chrf) {
    return "[{\"name\": \"BLEU\", \"score\": " + std::to_string(bleu) +
           "}, {\"name\": \"chrF2\", \"score\": " + std::to_string(chrf) + "}]";
  };
  write_file(run / "score" / "test2016.join2.best.json", score(18.0, 40.0));  // sorts first, but is a probe
  write_file(run / "score" / "test2016.best.json", score(37.5, 57.5));
  write_file(run / "score" / "test2016.avg5.json", score(38.25, 58.0));
  const report::RunSummary r = report::read_run(run);
  REQUIRE(r.test);
  REQUIRE(r.test->set == "test2016");
  REQUIRE(r.test->best->file == "score/test2016.best.json");
  REQUIRE(*r.test->best->bleu == 37.5);
  REQUIRE(*r.test->avg5->chrf == 58.0);
  // A budget's score files, when there are, win: the runs of experiments/quality_m30k.sh read as before.
  write_file(run / "score.60min.json", score(30.0, 50.0));
  const report::RunSummary timed = report::read_run(run);
  REQUIRE(timed.test->set.empty());
  REQUIRE(timed.test->minutes == 60);
  REQUIRE(*timed.test->best->bleu == 30.0);
}
