// What attn report says of a run that is not a finished, well-formed one:
// in progress exactly while a process holds its save dir's attn.lock,
// whatever the log's age; killed, stopped by a signal, finished or resumed,
// from the log's model and end records; no validation, a corrupt, empty or
// missing log, a FIFO or a device as log.jsonl, an endless line: notes,
// never a crash or a hang; a folder that holds no run: exit status 2.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "../cli/child_process.h"
#include "../cli/run_attn.h"
#include "../support.h"
#include "../train/tiny_corpus.h"
#include "report_fixtures.h"
#include "attn/core/dir_lock.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"

using namespace attn;
using attn::test::has_note;
using attn::test::lines_of;
using attn::test::notes_of;
using attn::test::require_user_error;
using attn::test::run_attn;
using attn::test::train_line;
using attn::test::valid_line;
using attn::test::write_file;
using attn::test::write_model;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("report: the save dir's lock tells a live run from a killed one, whatever the log's age", "[report]") {
  test::ScratchDir dir;
  std::vector<json> train;
  for (int u = 1; u <= 6; ++u) train.push_back(train_line(u, true));
  const fs::path dead = dir.path() / "dead", live = dir.path() / "live";
  for (const fs::path& run : {dead, live}) {
    fs::create_directories(run);
    write_file(run / "log.jsonl", lines_of(train));
  }
  write_file(dead / "attn.lock", "12345\n");  // a killed trainer's lock file: there, held by nobody
  fs::last_write_time(live / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  const DirLock holding(live);  // a trainer that has not logged for two hours but runs
  const std::vector<report::RunSummary> runs = report::read_runs({dead, live});
  INFO(notes_of(runs[0]) << " | " << notes_of(runs[1]));
  REQUIRE_FALSE(runs[0].in_progress);  // its log is seconds old, but no process holds its lock
  REQUIRE(has_note(runs[0], "no process holds its attn.lock"));
  REQUIRE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "in progress"));
}

TEST_CASE("report: runs without validation, in progress, with corrupt, empty or no log get notes, not a crash",
          "[report][e2e]") {
  test::ScratchDir dir;
  auto make = [&](const std::string& name) {
    fs::create_directories(dir.path() / name);
    return dir.path() / name;
  };
  const fs::path novalid = make("novalid"), running = make("running"), corrupt = make("corrupt"), empty = make("empty"),
                 nolog = make("nolog"), killed = make("killed");
  std::vector<json> train;
  for (int u = 1; u <= 12; ++u) train.push_back(train_line(u, true));
  write_file(novalid / "log.jsonl", lines_of(train));
  write_model(novalid / "last.attn", "convsan");
  // In progress: the log goes on after the last checkpoint and its last line is being written.
  write_file(running / "log.jsonl",
             lines_of(train) + valid_line(12, 3.0).dump() + "\n" + train_line(13, true).dump().substr(0, 30));
  write_file(corrupt / "log.jsonl", lines_of({train[0], train[1]}) + "\x01\x02 binary junk\n" + lines_of({train[2]}) +
                                        "{\"split\": \"valid\", \"update\": 3, \"elapsed_s\": 5, \"bleu\": 7.5}\n");
  write_model(corrupt / "best.attn", "fastdisa");
  write_file(empty / "log.jsonl", "");
  write_file(killed / "log.jsonl", lines_of(train));
  fs::last_write_time(killed / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  write_file(nolog / "best.attn", "not a model file at all");

  const DirLock trainer(running);  // a live trainer holds its save dir's lock
  const std::vector<report::RunSummary> runs = report::read_runs({novalid, running, corrupt, empty, nolog, killed});
  REQUIRE(runs.size() == 6);
  for (const auto& r : runs) {
    INFO(r.name << ": " << notes_of(r));
    REQUIRE_FALSE(r.notes.empty());
  }
  REQUIRE(has_note(runs[0], "no validation yet"));
  REQUIRE_FALSE(runs[0].best_valid_bleu);
  REQUIRE(*runs[0].updates == 12);
  REQUIRE(*runs[0].peak_rss_mb == 112.0);
  REQUIRE(runs[0].arch == "convsan");
  REQUIRE_FALSE(runs[0].in_progress);
  REQUIRE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "in progress"));
  REQUIRE(has_note(runs[1], "unfinished"));
  REQUIRE(has_note(runs[1], "arch and parameters are not known"));
  REQUIRE(*runs[1].best_valid_bleu == 3.0);
  REQUIRE(has_note(runs[2], "not a JSON log record (the first is line 3)"));
  REQUIRE(runs[2].train_loss.size() == 3);
  REQUIRE(*runs[2].best_valid_bleu == 7.5);
  REQUIRE(runs[2].valid_ppl.empty());
  REQUIRE(has_note(runs[3], "empty"));
  REQUIRE(has_note(runs[4], "no log.jsonl"));
  REQUIRE(has_note(runs[4], "best.attn"));  // the broken model file is named
  REQUIRE(runs[4].arch.empty());
  REQUIRE(has_note(runs[5], "stopped without an end record"));
  REQUIRE_FALSE(runs[5].in_progress);

  const std::string page = report::report_page(runs);
  REQUIRE(test::count_occurrences(page, "<tr class=\"run\"") == 6);
  REQUIRE(page.find("no validation yet") != std::string::npos);
  REQUIRE(page.find("in progress") != std::string::npos);
  REQUIRE(page.find("no data yet") == std::string::npos);  // some run has points in every plot

  std::string args;
  for (const auto& r : runs) args += " " + r.dir;
  const auto out = run_attn("report" + args + " --json");
  REQUIRE(out.status == 0);
  const json table = json::parse(out.out);
  REQUIRE(table["runs"].size() == 6);
  for (const json& r : table["runs"]) REQUIRE_FALSE(r["notes"].empty());
  REQUIRE(table["runs"][1]["in_progress"] == true);

  // A page of runs without any point says so in each plot.
  const std::string bare = report::report_page({runs[3], runs[4]});
  REQUIRE(test::count_occurrences(bare, "no data yet") == 6);
}

TEST_CASE("report: a log's model and end records stand in for model files, and tell a finished run", "[report]") {
  test::ScratchDir dir;
  std::vector<json> records{{{"split", "model"},
                             {"update", 0},
                             {"elapsed_s", 0.0},
                             {"arch", "muse"},
                             {"parameters", 1234},
                             {"config", {{"arch", "muse"}, {"decoder_mixer", "mha"}}}}};
  for (int u = 1; u <= 12; ++u) records.push_back(train_line(u, true));
  records.push_back(valid_line(12, 4.0));
  const json interrupted = {{"split", "end"}, {"update", 12}, {"elapsed_s", 18.5}, {"reason", "interrupted"}};
  const json finished = {{"split", "end"}, {"update", 12}, {"elapsed_s", 18.5}, {"reason", "finished"}};

  // Archived (no model files), finished: arch and parameters from the log, and no "killed?" note however old.
  const fs::path archived = dir.path() / "archived", stopped = dir.path() / "stopped", resumed = dir.path() / "resumed";
  for (const fs::path& p : {archived, stopped, resumed}) fs::create_directories(p);
  write_file(archived / "log.jsonl", lines_of(records) + finished.dump() + "\n");
  fs::last_write_time(archived / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  // Stopped by a signal: says so. Resumed after the stop: the end record no longer counts.
  write_file(stopped / "log.jsonl", lines_of(records) + interrupted.dump() + "\n");
  write_file(resumed / "log.jsonl", lines_of(records) + interrupted.dump() + "\n" + train_line(13, true).dump() + "\n");

  const DirLock resumed_trainer(resumed);
  const std::vector<report::RunSummary> runs = report::read_runs({archived, stopped, resumed});
  INFO("archived: " << notes_of(runs[0]) << "stopped: " << notes_of(runs[1]) << "resumed: " << notes_of(runs[2]));
  REQUIRE(runs[0].arch == "muse + mha decoder");
  REQUIRE(*runs[0].parameters == 1234);
  REQUIRE(runs[0].notes.empty());
  REQUIRE(*runs[0].best_valid_bleu == 4.0);
  REQUIRE(*runs[0].updates == 12);
  REQUIRE(has_note(runs[1], "stopped by SIGINT/SIGTERM/SIGHUP at update 12"));
  REQUIRE_FALSE(runs[1].in_progress);
  REQUIRE(runs[2].in_progress);
  REQUIRE(*runs[2].updates == 13);

  // The end record's update is the run's last: train records come only every --log-every updates.
  const fs::path sparse = dir.path() / "sparse";
  fs::create_directories(sparse);
  json late = interrupted;
  late["update"] = 14;
  write_file(sparse / "log.jsonl", lines_of(records) + late.dump() + "\n");
  const report::RunSummary sparse_run = report::read_run(sparse);
  REQUIRE(*sparse_run.updates == 14);
  REQUIRE(has_note(sparse_run, "stopped by SIGINT/SIGTERM/SIGHUP at update 14"));

  const report::ParsedLog plain = report::parse_log(lines_of({train_line(1, false)}));
  REQUIRE(plain.arch.empty());
  REQUIRE(plain.end_reason.empty());
}

TEST_CASE("report: in progress is decided by the lock alone; a run killed mid-training is noted", "[report]") {
  test::ScratchDir dir;
  const json model_record = {
      {"split", "model"}, {"update", 0}, {"elapsed_s", 0.0}, {"arch", "transformer"}, {"parameters", 1000}};
  std::vector<json> records{model_record};
  for (int u = 1; u <= 6; ++u) records.push_back(train_line(u, true));
  records.push_back(valid_line(6, 3.0));
  const fs::path live = dir.path() / "live", killed = dir.path() / "killed";
  for (const fs::path& run : {live, killed}) {
    fs::create_directories(run);
    write_file(run / "log.jsonl", lines_of(records));
    // The checkpoint after the log, as the trainer writes them at a validation: the log is not newer.
    fs::last_write_time(run / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::minutes(1));
    write_model(run / "last.attn", "transformer");
  }
  write_file(killed / "attn.lock", "12345\n");  // SIGKILLed mid-training: the kernel let its lock go
  const DirLock holding(live);
  const std::vector<report::RunSummary> runs = report::read_runs({live, killed});
  INFO(notes_of(runs[0]) << " || " << notes_of(runs[1]));
  REQUIRE(runs[0].in_progress);
  REQUIRE(has_note(runs[0], "in progress"));
  REQUIRE_FALSE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "stopped without an end record at update 6"));
  REQUIRE(has_note(runs[1], "no process holds its attn.lock"));
}

TEST_CASE("report: a FIFO or a device as log.jsonl is not read; an endless line is skipped", "[report][io][e2e]") {
  test::ScratchDir dir;
  const fs::path fifo = dir.path() / "fifo", zero = dir.path() / "zero", long_line = dir.path() / "long";
  for (const fs::path& run : {fifo, zero, long_line}) {
    fs::create_directories(run);
    write_model(run / "last.attn", "transformer");
  }
  REQUIRE(::mkfifo((fifo / "log.jsonl").c_str(), 0644) == 0);  // no writer: opening it would block for ever
  fs::create_symlink("/dev/zero", zero / "log.jsonl");         // reading it to the end never ends
  write_file(long_line / "log.jsonl", std::string(3 << 20, 'x') + "\n" + lines_of({train_line(1, true)}));
  // The real binary, bounded in time and memory: the old reader hung on the FIFO and filled memory from /dev/zero.
  // AddressSanitizer reserves terabytes of address space for its shadow, so under it only time is bounded here
  // (the main pass bounds memory too).
  const char* const bounds = test::under_address_sanitizer() ? "timeout 60 " : "ulimit -v 4000000; timeout 60 ";
  const test::RunResult r =
      run_attn("report " + fifo.string() + " " + zero.string() + " " + long_line.string() + " --json", "", bounds);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json table = json::parse(r.out);
  REQUIRE(table["runs"][0]["notes"].dump().find("not a regular file") != std::string::npos);
  REQUIRE(table["runs"][1]["notes"].dump().find("not a regular file") != std::string::npos);
  REQUIRE(table["runs"][2]["notes"].dump().find("longer than 1 MiB") != std::string::npos);
  REQUIRE(table["runs"][2]["updates"] == 1);
}

TEST_CASE("report: a folder that holds no run is said, exit status 2", "[report][e2e]") {
  test::ScratchDir dir;
  fs::create_directories(dir.path() / "empty");
  write_file(dir.path() / "notes.txt", "not a run\n");
  require_user_error(run_attn("report " + (dir.path() / "empty").string() + " --json"), "holds no training run");
  require_user_error(run_attn("report " + dir.path().string() + " --json"), "holds no training run");
}

TEST_CASE("report: a run killed before its first logged update is noted as stopped without an end record",
          "[report][train][nothing-lost-4][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 60, 5);
  test::write_tiny_corpus(dir.path(), "valid", 5, 6);
  const fs::path run = dir.path() / "run";
  {
    // SIGKILL once it has logged its model record and waits before update 1.
    test::ChildProcess trainer(test::tiny_train_args(dir.path(), "run", {"--test-pause-at", "update:0"}),
                               dir.path() / "run.out");
    REQUIRE(trainer.wait_until([&] { return fs::exists(run / "paused"); }));
    trainer.signal(SIGKILL);
    REQUIRE(trainer.wait() == -SIGKILL);
  }
  const auto out = run_attn("report " + run.string() + " --json");
  INFO(out.err);
  REQUIRE(out.status == 0);
  const json notes = json::parse(out.out)["runs"][0]["notes"];
  INFO(notes.dump());
  REQUIRE(notes.dump().find("stopped without an end record before its first logged update") != std::string::npos);
  REQUIRE(notes.dump().find("no usable record") == std::string::npos);
  // Killed sooner, between its lock and its first record: an empty log beside the lock file says the same.
  const fs::path sooner = dir.path() / "sooner";
  fs::create_directories(sooner);
  write_file(sooner / "log.jsonl", "");
  write_file(sooner / "attn.lock", "12345\n");  // the killed trainer's lock file, held by nobody
  const std::vector<report::RunSummary> runs = report::read_runs({sooner});
  INFO(notes_of(runs[0]));
  REQUIRE(has_note(runs[0], "stopped without an end record before its first logged update"));
}
