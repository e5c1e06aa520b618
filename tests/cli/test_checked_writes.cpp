// Every write is checked and fails with the OS's reason (core/checked_stream.h):
// the JSON log of training, --help and --version, standard output with a page
// beside it, and attend's files; a failed one leaves no other output new.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

TEST_CASE("checked writes: --help and --version to a full disk exit 2 with the reason", "[cli][io]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  for (const std::string args : {"--version", "--help", "translate --help", "train --help", "score --help"}) {
    INFO(args);
    require_user_error(to_full_stdout(args, dir), "No space left on device");
  }
}

TEST_CASE("checked writes: train --log-json on a full disk stops with the reason, before training",
          "[cli][io][train]") {
  if (!fs::exists("/dev/full")) ATTN_SKIP("no /dev/full on this machine");
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  const RunResult r =
      run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "2", "--log-json", "/dev/full"})));
  require_user_error(r, "cannot write the JSON log /dev/full: No space left on device");
  REQUIRE_FALSE(fs::exists(dir / "run"));  // nothing trained, nothing left
}

TEST_CASE("checked writes: attend's JSON to a full standard output leaves no page, and says ENOSPC", "[cli][io]") {
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

TEST_CASE("checked writes: attend's files on a full disk say ENOSPC, as the other commands do", "[cli][io]") {
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
