// Interruptions driven by a real child process and real signals: SIGINT
// mid-epoch and SIGTERM during a validation each leave a resumable checkpoint
// and exit 128 + the signal, and the resumed run ends bit-identical to one
// that was never interrupted; SIGKILL at any moment leaves last.attn and
// best.attn whole, and the next run resumes and clears the dead process's
// temporary files.
#include <filesystem>
#include <string>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "attn/core/rng.h"
#include "attn/model/model_file.h"
#include "attn/train/checkpoint.h"
#include "child_process.h"
#include "run_attn.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

std::vector<float> weights(const fs::path& file) {
  const auto loaded = model::load_model_values(file);
  const auto v = loaded.model->params().values();
  return {v.begin(), v.end()};
}

std::int64_t saved_update(const fs::path& file) {
  return train::read_train_state(model::load_model_values(file)).update;
}

// Runs attn train until it pauses at `pause_at`, sends `sig`, and returns the exit status.
int interrupt_at(const fs::path& dir, const std::string& run, const std::vector<std::string>& more,
                 const std::string& pause_at, int sig) {
  const fs::path paused = dir / run / "paused";
  fs::remove(paused);
  std::vector<std::string> args = more;
  args.insert(args.end(), {"--test-pause-at", pause_at});
  test::ChildProcess trainer(test::tiny_train_args(dir, run, args), dir / (run + ".out"));
  REQUIRE(trainer.wait_until([&] { return fs::exists(paused); }));
  trainer.signal(sig);
  return trainer.wait();
}

}  // namespace

TEST_CASE("interrupt (real signals): SIGINT mid-epoch and SIGTERM in a validation; the resumed run is bit-identical",
          "[train][cli][signals][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 1);
  test::write_tiny_corpus(dir.path(), "valid", 20, 2);
  const std::vector<std::string> budget{"--max-updates", "12", "--valid-every", "4"};

  test::ChildProcess straight(test::tiny_train_args(dir.path(), "straight", budget), dir.path() / "straight.out");
  REQUIRE(straight.wait() == 0);

  // 300 pairs in batches of 64 tokens: update 5 is mid-epoch; updates 4, 8 and 12 validate.
  REQUIRE(interrupt_at(dir.path(), "cut", budget, "update:5", SIGINT) == 128 + SIGINT);
  REQUIRE(saved_update(dir.path() / "cut" / "last.attn") == 5);
  REQUIRE(interrupt_at(dir.path(), "cut", budget, "valid:8", SIGTERM) == 128 + SIGTERM);
  REQUIRE(saved_update(dir.path() / "cut" / "last.attn") == 8);
  test::ChildProcess finish(test::tiny_train_args(dir.path(), "cut", budget), dir.path() / "cut.out");
  REQUIRE(finish.wait() == 0);

  for (const char* file : {"last.attn", "best.attn"}) {
    INFO(file);
    REQUIRE(saved_update(dir.path() / "cut" / file) == saved_update(dir.path() / "straight" / file));
    REQUIRE(weights(dir.path() / "cut" / file) == weights(dir.path() / "straight" / file));
  }
  // Each stop is on record for attn report: two "interrupted" ends, then "finished".
  const std::string log = test::slurp(dir.path() / "cut" / "log.jsonl");
  REQUIRE(log.find(R"("reason":"interrupted")") != std::string::npos);
  REQUIRE(log.rfind(R"("reason":"finished")") > log.rfind(R"("reason":"interrupted")"));
}

TEST_CASE("interrupt (real signals): SIGKILL at any moment leaves last.attn and best.attn whole",
          "[train][cli][signals][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 3);
  test::write_tiny_corpus(dir.path(), "valid", 20, 4);
  // Every update validates and saves last, best and a periodic checkpoint, so
  // most of the run is spent writing files: the kills land in and between writes.
  const std::vector<std::string> busy{"--valid-every", "1", "--keep-last", "2", "--log-every", "1"};
  const fs::path run = dir.path() / "run";
  Rng rng(11);
  std::int64_t progress = 0;
  for (int round = 0; round < 8; ++round) {
    INFO("round " << round);
    const auto log_size = [&] { return fs::exists(run / "log.jsonl") ? fs::file_size(run / "log.jsonl") : 0; };
    const auto logged_before = log_size();
    test::ChildProcess trainer(test::tiny_train_args(dir.path(), "run", busy), dir.path() / "run.out");
    REQUIRE(trainer.wait_until([&] { return fs::exists(run / "best.attn") && log_size() > logged_before + 400; }));
    std::this_thread::sleep_for(std::chrono::microseconds(rng.below(20000)));
    trainer.signal(SIGKILL);
    REQUIRE(trainer.wait() == -SIGKILL);
    REQUIRE_NOTHROW(weights(run / "best.attn"));
    const std::int64_t update = saved_update(run / "last.attn");
    REQUIRE(update >= progress);
    progress = update;
  }
  REQUIRE(progress > 0);

  // The next run resumes from last.attn and removes what the killed processes left half-written.
  test::ChildProcess resumed(
      test::tiny_train_args(dir.path(), "run", {"--max-updates", std::to_string(progress + 2), "--valid-every", "1"}),
      dir.path() / "run.out");
  REQUIRE(resumed.wait() == 0);
  REQUIRE(saved_update(run / "last.attn") == progress + 2);
  for (const auto& entry : fs::directory_iterator(run)) {
    INFO(entry.path());
    REQUIRE(entry.path().filename().string().find(".tmp-") == std::string::npos);
  }
}

TEST_CASE("save dir lock: a second training into a running one's save dir stops at once; SIGKILL leaves no stale lock",
          "[train][cli][signals][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 5);
  test::write_tiny_corpus(dir.path(), "valid", 20, 6);
  const std::vector<std::string> budget{"--max-updates", "6"};
  const fs::path run = dir.path() / "run";
  for (int sig : {SIGINT, SIGKILL}) {
    INFO("first run stopped with signal " << sig);
    fs::remove(run / "paused");
    std::vector<std::string> paused_args = budget;
    paused_args.insert(paused_args.end(), {"--test-pause-at", "update:2"});
    test::ChildProcess first(test::tiny_train_args(dir.path(), "run", paused_args), dir.path() / "first.out");
    REQUIRE(first.wait_until([&] { return fs::exists(run / "paused"); }));
    const std::string log_before = test::slurp(run / "log.jsonl");

    test::ChildProcess second(test::tiny_train_args(dir.path(), "run", budget), dir.path() / "second.out");
    REQUIRE(second.wait() == 2);
    const std::string said = test::slurp(dir.path() / "second.out");
    INFO(said);
    REQUIRE(said.find(run.string() + " is in use by process ") != std::string::npos);
    REQUIRE(std::count(said.begin(), said.end(), '\n') == 1);
    REQUIRE(test::slurp(run / "log.jsonl") == log_before);  // nothing of the second run's in the first's log
    fs::remove(dir.path() / "second.out");

    first.signal(sig);
    first.wait();
  }
  // The killed run's lock died with it: the next run resumes and finishes.
  test::ChildProcess again(test::tiny_train_args(dir.path(), "run", budget), dir.path() / "again.out");
  REQUIRE(again.wait() == 0);
  REQUIRE(saved_update(run / "last.attn") == 6);
  REQUIRE_FALSE(fs::exists(run / "attn.lock"));  // a clean exit leaves no lock file
}

TEST_CASE("interrupt (real signals): SIGHUP (a closed terminal) saves a resumable checkpoint as SIGTERM does",
          "[train][cli][signals][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 1);
  test::write_tiny_corpus(dir.path(), "valid", 20, 2);
  const std::vector<std::string> budget{"--max-updates", "12", "--valid-every", "4"};
  REQUIRE(interrupt_at(dir.path(), "hup", budget, "update:5", SIGHUP) == 128 + SIGHUP);
  REQUIRE(saved_update(dir.path() / "hup" / "last.attn") == 5);
  REQUIRE(test::slurp(dir.path() / "hup" / "log.jsonl").find(R"("reason":"interrupted")") != std::string::npos);
  test::ChildProcess finish(test::tiny_train_args(dir.path(), "hup", budget), dir.path() / "hup.out");
  REQUIRE(finish.wait() == 0);
  REQUIRE(saved_update(dir.path() / "hup" / "last.attn") == 12);
}
