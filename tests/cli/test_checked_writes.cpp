// Every write is checked and fails with the OS's reason (core/checked_stream.h):
// the JSON log of training, --help and --version, standard output with a page
// beside it, and attend's files; a failed one leaves no other output new.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"
#include "tiny_model.h"

using namespace attn;
using namespace attn::test;  // run_attn, require_user_error, shell_words, ScratchDir, tiny_model
namespace fs = std::filesystem;

namespace {

// Runs `attn ARGS > /dev/full` (stdout only to the full device).
RunResult to_full_stdout(const std::string& args, const ScratchDir& dir) {
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const std::string err = (dir / "stderr.txt").string();
  const int raw = std::system((std::string(bin) + " " + args + " >/dev/full 2>" + err).c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.err = slurp(err);
  return r;
}

}  // namespace

TEST_CASE("checked writes: --help and --version to a full disk exit 2 with the reason", "[cli][io][e2e]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  for (const std::string args : {"--version", "--help", "translate --help", "train --help", "score --help"}) {
    INFO(args);
    require_user_error(to_full_stdout(args, dir), "No space left on device");
  }
}

TEST_CASE("checked writes: train --log-json on a full disk stops with the reason, before training",
          "[cli][io][train][e2e]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  const RunResult r =
      run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "2", "--log-json", "/dev/full"})));
  require_user_error(r, "cannot write the JSON log /dev/full: No space left on device");
  REQUIRE_FALSE(fs::exists(dir / "run"));  // nothing trained, nothing left
}

TEST_CASE("checked writes: attend's JSON to a full standard output leaves no page, and says ENOSPC", "[cli][io][e2e]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string in = dir.write("in.txt", "red cat\nblue dog sees two cats\n");
  const RunResult r = to_full_stdout(
      shell_words({"attend", "-m", model, "-i", in, "-o", "-", "--html", (dir / "maps.html").string()}), dir);
  require_user_error(r, "No space left on device");
  REQUIRE(r.err.find("Success") == std::string::npos);
  REQUIRE_FALSE(fs::exists(dir / "maps.html"));
}

TEST_CASE("checked writes: attend's files on a full disk say ENOSPC, as the other commands do", "[cli][io][e2e]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string in = dir.write("in.txt", "red cat\nblue dog sees two cats\n");
  for (const std::vector<std::string>& target :
       {std::vector<std::string>{"-o", "/dev/full"}, std::vector<std::string>{"--html", "/dev/full"}}) {
    std::vector<std::string> args{"attend", "-m", model, "-i", in};
    args.insert(args.end(), target.begin(), target.end());
    const RunResult r = run_attn(shell_words(args));
    INFO(target[0]);
    require_user_error(r, "No space left on device");
    REQUIRE(r.err.find("Input/output error") == std::string::npos);
  }
}

namespace {

// The bytes of one `ulimit -f` block in the shell run_attn uses (512 in dash, 1024 in bash).
std::uintmax_t ulimit_block_bytes(const ScratchDir& dir) {
  const fs::path probe = dir / "block-probe";
  const std::string cmd = "ulimit -f 1; head -c 4096 /dev/zero > " + shell_words({probe.string()}) + " 2>/dev/null";
  [[maybe_unused]] const int status = std::system(cmd.c_str());
  const std::uintmax_t bytes = fs::file_size(probe);
  fs::remove(probe);
  return bytes;
}

// Every line of the text, checked to be one JSON object (what attn report reads).
void require_json_lines(const std::string& text) {
  REQUIRE((text.empty() || text.back() == '\n'));
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    INFO(line);
    REQUIRE(nlohmann::json::parse(line, nullptr, false).is_object());
  }
}

}  // namespace

TEST_CASE("checked writes: a disk that fills while a log record is written leaves the log at its last whole line",
          "[cli][io][train][nothing-lost-4][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  const fs::path log = dir / "run" / "log.jsonl";
  REQUIRE(run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "2"}))).status == 0);
  // The log padded to 300–400 bytes short of the size limit: the next run's model record (about 1 KB) is cut.
  const std::uintmax_t limit = 40 * ulimit_block_bytes(dir);
  const std::string pad =
      R"({"split":"note","update":0,"elapsed_s":0,"padding":"........................................."})";
  {
    std::ofstream out(log, std::ios::app);
    for (std::uintmax_t size = fs::file_size(log); size + pad.size() + 1 <= limit - 300; size += pad.size() + 1)
      out << pad << '\n';
  }
  const std::string before = slurp(log);
  REQUIRE(before.size() > limit - 400);
  const RunResult full =
      run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "4"})), "", "ulimit -f 40; ");
  require_user_error(full, "cannot write the JSON log " + log.string() + ": File too large");
  REQUIRE(slurp(log) == before);  // not half a record
  // With room again the run resumes; its records are lines of their own, which attn report reads.
  const RunResult resumed = run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "4"})));
  INFO(resumed.err);
  REQUIRE(resumed.status == 0);
  require_json_lines(slurp(log));
}

TEST_CASE("checked writes: a log whose last line was cut (a kill, an older attn) is repaired before the run appends",
          "[cli][io][train][nothing-lost-4][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  const fs::path log = dir / "run" / "log.jsonl";
  REQUIRE(run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "2"}))).status == 0);
  // Half a record goes; a whole record without its newline keeps its line.
  const std::string record = R"({"split":"train","update":2,"elapsed_s":0.5,"loss":3.0})";
  const std::vector<std::pair<std::string, std::string>> tails{{record.substr(0, 20), ""}, {record, record + "\n"}};
  int max_updates = 2;
  for (const auto& [tail, kept] : tails) {
    INFO(tail);
    const std::string before = slurp(log);
    { std::ofstream(log, std::ios::app) << tail; }
    const RunResult r = run_attn(shell_words(tiny_train_args(
        dir.path(), "run", {"--max-updates", std::to_string(max_updates += 2), "--log-json", log.string()})));
    INFO(r.err);
    REQUIRE(r.status == 0);
    const std::string after = slurp(log);
    REQUIRE(after.substr(0, before.size() + kept.size()) == before + kept);
    require_json_lines(after);
    const RunResult report = run_attn(shell_words({"report", (dir / "run").string(), "--json"}));
    REQUIRE(report.status == 0);
    REQUIRE(report.out.find("not a JSON log record") == std::string::npos);
  }
}

TEST_CASE("checked writes: a disk full before the start leaves no log, no lock and no save dir",
          "[cli][io][train][nothing-lost-4][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  fs::create_directory(dir / "old");
  for (const char* save : {"new", "old"}) {
    INFO(save);
    // ulimit -f 0: no byte of any file, the stderr file included, so only the status is seen.
    const RunResult r =
        run_attn(shell_words(tiny_train_args(dir.path(), save, {"--max-updates", "2"})), "", "ulimit -f 0; ");
    REQUIRE(r.status == 2);
  }
  REQUIRE_FALSE(fs::exists(dir / "new"));
  REQUIRE(fs::is_empty(dir / "old"));
}
