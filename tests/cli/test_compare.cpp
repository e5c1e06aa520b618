// tools/compare.sh, the multi-seed comparison: killed mid-training (the whole
// process group, as when a session ends) and rerun with the same command, it
// finishes with the same translations, scores and weights as a run that was
// never interrupted.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <string>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "child_process.h"
#include "run_attn.h"

namespace fs = std::filesystem;
using namespace attn;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

// Every tensor of a model file (weights and optimizer moments), not its header, which holds the wall time.
std::string tensor_bytes(const fs::path& model) {
  const std::string blob = test::slurp(model);
  REQUIRE(blob.size() >= 8);
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | static_cast<unsigned char>(blob[i]);
  return blob.substr(8 + header);
}

std::vector<std::string> compare_words(const fs::path& data, const fs::path& out) {
  return {"tools/compare.sh",
          "--data",
          data.string(),
          "--out",
          out.string(),
          "--seeds",
          "1",
          "--updates",
          "16",
          "--probes",
          "2",
          "transformer",
          "--",
          "--dim",
          "16",
          "--heads",
          "2",
          "--layers",
          "1",
          "--ffn-dim",
          "32",
          "--vocab-size",
          "300",
          "--max-tokens",
          "400",
          "--valid-every",
          "6"};
}

// The environment of every compare.sh call: this build's attn, the toy language suffixes.
std::string compare_env() {
  return std::string("COMPARE_ATTN=") + std::getenv("ATTN_BIN") + " COMPARE_SRC=src COMPARE_TGT=tgt COMPARE_TEST=test ";
}

int run_compare(const fs::path& data, const fs::path& out, const fs::path& log) {
  const std::string cmd = "cd " + test::shell_words({kRepo.string()}) + " && " + compare_env() + "bash " +
                          test::shell_words(compare_words(data, out)) + " >>" + log.string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

}  // namespace

TEST_CASE("compare.sh: killed mid-training and rerun, it ends as an uninterrupted comparison", "[cli][compare][e2e]") {
  REQUIRE(std::getenv("ATTN_BIN") != nullptr);
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {  // compare.sh makes its probes with Python
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  test::ScratchDir dir;
  const fs::path data = dir.path() / "data";
  fs::create_directories(data);
  test::write_tiny_corpus(data, "train", 300, 1);
  test::write_tiny_corpus(data, "valid", 20, 2);
  test::write_tiny_corpus(data, "test", 12, 3);
  const fs::path log = dir.path() / "compare.log";

  REQUIRE(run_compare(data, dir.path() / "straight", log) == 0);

  // Paused inside training at update 9 (after the checkpoint of update 6), then
  // the script and its attn are killed at once.
  const fs::path cut = dir.path() / "cut", run = cut / "transformer" / "seed1";
  {
    std::vector<std::string> words{"-c", "cd " + test::shell_words({kRepo.string()}) + " && " + compare_env() +
                                             "exec bash " + test::shell_words(compare_words(data, cut)) +
                                             " --test-pause-at update:9"};
    words.insert(words.begin(), "bash");
    test::ChildProcess script(words, log, "/usr/bin/setsid");
    REQUIRE(script.wait_until([&] { return fs::exists(run / "paused"); }));
    REQUIRE(fs::exists(run / "last.attn"));
    REQUIRE_FALSE(fs::exists(run / "train.done"));
    script.signal_group(SIGKILL);
    script.wait();
  }
  REQUIRE(run_compare(data, cut, log) == 0);
  // Two starts in the run's log: the first from scratch, the second resumed at update 6.
  const std::string records = test::slurp(run / "log.jsonl");
  const std::size_t second = records.rfind("\"split\":\"model\"");
  REQUIRE(records.find("\"split\":\"model\"") != second);
  const std::size_t line_start = records.rfind('\n', second) + 1;
  REQUIRE(records.substr(line_start, records.find('\n', second) - line_start).find("\"update\":6") !=
          std::string::npos);

  const fs::path straight = dir.path() / "straight" / "transformer" / "seed1";
  REQUIRE(fs::exists(run / "done"));
  REQUIRE(tensor_bytes(run / "last.attn") == tensor_bytes(straight / "last.attn"));
  for (const char* set : {"test", "test.join2"})
    for (const char* model : {"best", "avg5"}) {
      const std::string name = std::string(set) + "." + model;
      INFO(name);
      REQUIRE(test::slurp(run / "hyp" / (name + ".txt")) == test::slurp(straight / "hyp" / (name + ".txt")));
      REQUIRE(test::slurp(run / "score" / (name + ".json")) == test::slurp(straight / "score" / (name + ".json")));
    }
  // A third call has nothing left to do.
  REQUIRE(run_compare(data, cut, log) == 0);
  REQUIRE(test::slurp(log).find("transformer seed 1: done") != std::string::npos);
}
