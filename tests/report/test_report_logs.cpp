// The files attn report reads in a run directory, each on its own: the log
// parser keeps the last line per update (a resumed run's lines win, a run
// started again from scratch counts alone) and notes corrupt and unfinished
// lines; the median training speed; attn score's JSON files in score/ (the
// plain test set's, not a probe's; nothing outside score/); the plots' axis ticks.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <algorithm>
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

TEST_CASE("report: median tokens/s, score files, axis ticks", "[report]") {
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
  // Only attn score's JSON: its text lines and --score-only are not read.
  REQUIRE_FALSE(report::parse_score_file("BLEU|nrefs:1|tok:13a = 37.6 72.1/47.8 (BP = 0.948)\nchrF2|nrefs:1 = 57.8\n"));
  REQUIRE_FALSE(report::parse_score_file("37.6\n57.8\n"));
  REQUIRE_FALSE(report::parse_score_file("[garbage"));
  REQUIRE_FALSE(report::parse_score_file(R"([{"name": "TER", "score": 50.0}])"));

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

// A run's test scores are score/<set>.<model>.json (attn score --format json), the long-input probes beside the
// test set; files outside the run layout are not read.
TEST_CASE("report: a run's test scores come from score/, the plain test set's, not a probe's", "[report]") {
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
  // An older script's names beside it: not the run layout, not read.
  write_file(run / "score.60min.json", score(30.0, 50.0));
  write_file(run / "score.avg5.60min.txt", "BLEU|nrefs:1 = 31.0\n");
  const report::RunSummary r = report::read_run(run);
  REQUIRE(r.test);
  REQUIRE(r.test->set == "test2016");
  REQUIRE(r.test->best->file == "score/test2016.best.json");
  REQUIRE(*r.test->best->bleu == 37.5);
  REQUIRE(*r.test->avg5->chrf == 58.0);
  for (const std::string& note : r.notes) REQUIRE(note.find("score") == std::string::npos);

  // A score file of the layout that holds no score is a note; one alone is enough for the row.
  write_file(run / "score" / "test2016.best.json", "BLEU = 37.5\n");
  const report::RunSummary text = report::read_run(run);
  REQUIRE(text.test);
  REQUIRE_FALSE(text.test->best);
  REQUIRE(*text.test->avg5->bleu == 38.25);
  REQUIRE(std::count(text.notes.begin(), text.notes.end(),
                     "score/test2016.best.json: no BLEU or chrF score in it; ignored") == 1);

  // Without score/, a folder holding only files of no run layout is no run.
  const fs::path old = dir.path() / "old";
  fs::create_directories(old);
  write_file(old / "score.60min.json", score(30.0, 50.0));
  write_file(old / "train.log", "\tMaximum resident set size (kbytes): 1024\n");
  REQUIRE_FALSE(report::holds_run(old));
  REQUIRE(report::holds_run(run));
}
