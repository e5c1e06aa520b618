// Resuming into a save dir: a model flag that
// differs from the checkpoint's model is refused, naming every difference;
// training flags may change and the log says which did; a run that cannot
// start leaves no new file behind.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"

using namespace attn;
using namespace attn::test;  // run_attn, require_user_error, shell_words, ScratchDir
namespace fs = std::filesystem;

namespace {

// The tiny run's flags with `more` replacing the values of those it sets (a flag given twice is an error).
test::RunResult train(const fs::path& dir, const std::vector<std::string>& more) {
  std::vector<std::string> args = test::tiny_train_args(dir, "run");
  for (std::size_t i = 0; i < more.size(); ++i) {
    const bool has_value = i + 1 < more.size() && more[i + 1].rfind("--", 0) != 0;
    const auto at = std::find(args.begin(), args.end(), more[i]);
    if (at != args.end() && has_value) {
      *(at + 1) = more[++i];
      continue;
    }
    args.push_back(more[i]);
    if (has_value) args.push_back(more[++i]);
  }
  return run_attn(shell_words(args));
}

// The tiny corpus in dir and a first run of `more` (the tiny run's flags otherwise) into dir/run.
void first_run(const fs::path& dir, const std::vector<std::string>& more) {
  test::write_tiny_corpus(dir, "train", 100, 5);
  test::write_tiny_corpus(dir, "valid", 10, 6);
  const test::RunResult r = train(dir, more);
  INFO(r.err);
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE("resume: changed model flags are refused, naming each; changed training flags are logged",
          "[cli][train][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--max-updates", "2"});
  test::RunResult r;
  const std::string before = test::slurp(dir.path() / "run" / "last.attn");
  // tiny_train_args has --dim 16 --heads 2 --layers 1 --vocab-size 300 --dropout 0.1.
  struct Case {
    std::vector<std::string> flags;
    std::vector<std::string> named;
  };
  const Case cases[] = {
      {{"--dim", "32"}, {"--dim 32 (the checkpoint: 16)"}},
      {{"--heads", "4", "--layers", "2"}, {"--heads 4 (the checkpoint: 2)", "--layers 2 (the checkpoint: 1)"}},
      {{"--vocab-size", "400"}, {"--vocab-size 400 (the checkpoint: 300)"}},
      {{"--dropout", "0.2"}, {"--dropout 0.2 (the checkpoint: 0.1)"}},
      {{"--no-share-all-embeddings"}, {"--share-all-embeddings false (the checkpoint: true)"}},
      {{"--csan-window", "5"}, {"--csan-window 5 (the checkpoint: 11)"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> more = c.flags;
    more.insert(more.end(), {"--max-updates", "4"});
    r = train(dir.path(), more);
    INFO(shell_words(c.flags) << ": " << r.err);
    require_user_error(r, "holds a model trained with other model flags");
    for (const std::string& named : c.named) REQUIRE(r.err.find(named) != std::string::npos);
    REQUIRE(test::slurp(dir.path() / "run" / "last.attn") == before);
  }
  // The same model flags again, and other training flags: resumes and says what changed.
  r = train(dir.path(), {"--max-updates", "4", "--lr", "1e-3", "--log-every", "1"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string log = test::slurp(dir.path() / "run" / "log.jsonl");
  REQUIRE(log.find(R"("changed_flags":"--lr 0.003 → 0.001, --max-updates 2 → 4")") != std::string::npos);
  // Without the model flags at all (the preset's values): the checkpoint's model resumes.
  std::vector<std::string> bare{"train",
                                "--train-src",
                                (dir.path() / "train.src").string(),
                                "--train-tgt",
                                (dir.path() / "train.tgt").string(),
                                "--valid-src",
                                (dir.path() / "valid.src").string(),
                                "--valid-tgt",
                                (dir.path() / "valid.tgt").string(),
                                "--save-dir",
                                (dir.path() / "run").string(),
                                "--max-updates",
                                "5",
                                "--threads",
                                "1",
                                "--quiet"};
  r = run_attn(shell_words(bare));
  INFO(r.err);
  REQUIRE(r.status == 0);
}

TEST_CASE("train: a run that cannot start leaves no new save dir, log or lock", "[cli][train][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 50, 5);
  test::write_tiny_corpus(dir.path(), "valid", 5, 6);
  dir.write("empty.src", "");
  dir.write("empty.tgt", "");
  dir.write("broken.attn", "not a model");
  const std::string run = (dir.path() / "run").string();
  require_user_error(train(dir.path(), {"--train-src", (dir.path() / "missing.src").string()}), "missing.src");
  require_user_error(train(dir.path(), {"--valid-src", (dir.path() / "empty.src").string(), "--valid-tgt",
                                        (dir.path() / "empty.tgt").string()}),
                     "the validation set needs at least one sentence pair");
  require_user_error(train(dir.path(), {"--resume", (dir.path() / "broken.attn").string()}), "broken.attn");
  REQUIRE_FALSE(fs::exists(run));
  // An existing save dir keeps exactly what it had.
  fs::create_directory(run);
  dir.write("run/notes.txt", "mine");
  require_user_error(train(dir.path(), {"--resume", (dir.path() / "broken.attn").string()}), "broken.attn");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(run)) left.push_back(e.path().filename().string());
  REQUIRE(left == std::vector<std::string>{"notes.txt"});
}

TEST_CASE("resume: without --arch the checkpoint's arch resumes; only a typed --arch that differs is refused",
          "[cli][train][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--arch", "convsan", "--max-updates", "2"});
  // The default arch (transformer) was compared as if typed.
  test::RunResult r = train(dir.path(), {"--max-updates", "3"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.find("holds a") == std::string::npos);
  const std::string log = test::slurp(dir.path() / "run" / "log.jsonl");
  REQUIRE(log.rfind(R"("arch":"convsan")") > log.find(R"("reason":"finished")"));  // the second process: convsan too
  require_user_error(train(dir.path(), {"--arch", "transformer", "--max-updates", "4"}),
                     "holds a 'convsan' model but --arch is 'transformer'");
}

TEST_CASE("resume: a refused flag is named once, with the checkpoint's value in words", "[cli][train][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--max-updates", "2"});
  // --layers sets the encoder's and the decoder's: one difference, said once.
  test::RunResult r = train(dir.path(), {"--layers", "2", "--max-updates", "4"});
  require_user_error(r, "--layers 2 (the checkpoint: 1)");
  REQUIRE(test::count_occurrences(r.err, "--layers 2") == 1);
  // The checkpoint's decoder mixer is the arch's own (stored as ""): named, not left blank.
  r = train(dir.path(), {"--decoder-mixer", "csan", "--max-updates", "4"});
  require_user_error(r, "--decoder-mixer csan (the checkpoint: mha, the transformer arch's own)");
  REQUIRE(r.err.find("(the checkpoint: )") == std::string::npos);
}

namespace {

// Every file under `dir` with its content (attn.lock: only that it is there, its pid is the last process's).
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    files[fs::relative(e.path(), dir).string()] =
        e.path().filename() == "attn.lock" ? "" : (e.is_regular_file() ? test::slurp(e.path()) : "(not a file)");
  return files;
}

}  // namespace

TEST_CASE("train: a start that fails after the data are read leaves the save dir exactly as it found it",
          "[cli][train][nothing-lost-4][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--max-updates", "2"});
  const std::string best = (dir.path() / "run" / "best.attn").string();
  fs::create_directory(dir.path() / "empty");
  fs::create_directory(dir.path() / "notes");
  dir.write("notes/notes.txt", "mine");
  fs::copy(dir.path() / "run", dir.path() / "copy");  // a run of its own: log, checkpoints, lock file
  for (const char* save : {"empty", "notes", "copy"}) {
    const fs::path save_dir = dir.path() / save;
    const auto before = contents(save_dir);
    // A checkpoint without an optimizer (found when the model is resumed), a log that cannot be written
    // (found when the first record is), a disk that takes no byte (ulimit -f 0: every file the run writes,
    // its stderr file too, so only the status is seen).
    require_user_error(train(dir.path(), {"--save-dir", save_dir.string(), "--resume", best}), "no optimizer state");
    if (fs::exists("/dev/full"))
      require_user_error(train(dir.path(), {"--save-dir", save_dir.string(), "--resume",
                                            (dir.path() / "run" / "last.attn").string(), "--log-json", "/dev/full"}),
                         "No space left on device");
    std::vector<std::string> args = test::tiny_train_args(dir.path(), save, {"--max-updates", "4"});
    REQUIRE(run_attn(shell_words(args), "", "ulimit -f 0; ").status == 2);
    INFO(save);
    REQUIRE(contents(save_dir) == before);
  }
}

TEST_CASE("resume: into a new save dir, the run writes last.attn and best.attn, with updates left or none",
          "[cli][train][nothing-lost-4][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--max-updates", "4"});
  const std::string last = (dir.path() / "run" / "last.attn").string();
  // Nothing left to train; a few updates left, validated at the end; a few left, none validated by --valid-every.
  const std::vector<std::vector<std::string>> cases{{"--max-updates", "4"},
                                                    {"--max-updates", "6"},
                                                    {"--max-updates", "6", "--valid-every", "100"}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const fs::path save_dir = dir.path() / ("new" + std::to_string(i));
    std::vector<std::string> more = cases[i];
    more.insert(more.end(), {"--resume", last, "--save-dir", save_dir.string()});
    const test::RunResult r = train(dir.path(), more);
    INFO(i << ": " << r.err);
    REQUIRE(r.status == 0);
    for (const char* file : {"last.attn", "best.attn"}) {
      INFO(file);
      const test::RunResult info = run_attn(shell_words({"info", (save_dir / file).string()}));
      REQUIRE(info.status == 0);
    }
  }
}

TEST_CASE("resume: a model flag overridden by a narrower one is named with the value typed",
          "[cli][train][nothing-lost-4][e2e]") {
  test::ScratchDir dir;
  first_run(dir.path(), {"--max-updates", "2"});  // one layer each side
  // --layers 1 matches for the decoder; --enc-layers 2 is the difference.
  test::RunResult r = train(dir.path(), {"--layers", "1", "--enc-layers", "2", "--max-updates", "4"});
  require_user_error(r, "--enc-layers 2 (the checkpoint: 1)");
  REQUIRE(r.err.find("--layers") == std::string::npos);
  r = train(dir.path(), {"--layers", "2", "--enc-layers", "1", "--max-updates", "4"});
  require_user_error(r, "--layers 2 (the checkpoint: 1)");
  REQUIRE(r.err.find("--enc-layers") == std::string::npos);
  r = train(dir.path(), {"--layers", "2", "--enc-layers", "1", "--dec-layers", "1", "--max-updates", "3"});
  INFO(r.err);
  REQUIRE(r.status == 0);
}
