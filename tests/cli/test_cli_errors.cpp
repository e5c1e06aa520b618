// Bad input (docs/reliability.md): one line naming the file or flag,
// exit status 2, nothing written under a final name.
#include <filesystem>
#include <fstream>

#include "../support.h"
#include "run_attn.h"

using attn::test::require_user_error;
using attn::test::run_attn;
namespace fs = std::filesystem;

namespace {
using Dir = attn::test::ScratchDir;
}  // namespace

TEST_CASE("cli: --help, --version and unknown flags", "[cli][e2e]") {
  auto r = run_attn("--version");
  REQUIRE(r.status == 0);
  REQUIRE(r.out.find("attn ") == 0);
  r = run_attn("--help");
  REQUIRE(r.status == 0);
  for (const char* sub : {"train", "translate", "attend", "score", "info"})
    REQUIRE(r.out.find(sub) != std::string::npos);
  require_user_error(run_attn("translate -m model.attn --bogus"), "--bogus");
  require_user_error(run_attn("frobnicate"), "frobnicate");
}

TEST_CASE("cli: bad training input gets one line and exit status 2", "[cli][e2e]") {
  Dir d;
  const std::string good = "a b c\nd e f\n";
  d.write("ok.src", good);
  d.write("ok.tgt", good);
  const std::string valid = " --valid " + (d.path() / "ok").string();
  const std::string save = " --save-dir " + (d.path() / "run").string();
  require_user_error(run_attn("train --train " + (d.path() / "missing").string() + valid + save), "no such file");
  d.write("short.src", "a\nb\nc\n");
  d.write("short.tgt", "a\nb\n");
  require_user_error(run_attn("train --train " + (d.path() / "short").string() + valid + save), "3 lines");
  d.write("empty.src", "");
  d.write("empty.tgt", "");
  require_user_error(run_attn("train --train " + (d.path() / "empty").string() + valid + save), "empty");
  d.write("latin.src", "caf\xe9\n");
  d.write("latin.tgt", "cafe\n");
  require_user_error(run_attn("train --train " + (d.path() / "latin").string() + valid + save),
                     "latin.src:1: invalid UTF-8");
  d.write("nul.src", std::string("a\0b\n", 4));
  d.write("nul.tgt", "ab\n");
  require_user_error(run_attn("train --train " + (d.path() / "nul").string() + valid + save), "NUL");
  const std::string ok = " --train " + (d.path() / "ok").string() + valid + save;
  require_user_error(run_attn("train" + ok + " --dim 250 --heads 4"), "not divisible");
  require_user_error(run_attn("train" + ok + " --norm sideways"), "--norm");
  require_user_error(run_attn("train" + ok + " --best-metric accuracy"), "--best-metric");
  require_user_error(run_attn("train" + ok + " --precision fp16"), "--precision");
  // Flags valid alone, not together: a head area wider than the heads allow.
  require_user_error(run_attn("train" + ok + " --arch convsan2d --dim 16 --heads 2 --csan-head-window 9"),
                     "--csan-head-window 9 is wider than 2 heads allow (at most 3)");
  require_user_error(run_attn("train" + ok + " --arch lstm"), "--arch lstm");
  require_user_error(run_attn("train --valid x"), "--train");
  // --src equal to --tgt would train a copy model: refused.
  require_user_error(run_attn("train --train " + (d.path() / "ok").string() + " --src src --tgt src" + valid + save),
                     "the source and target training files are the same file");
  REQUIRE_FALSE(fs::exists(d.path() / "run" / "last.attn"));
}

TEST_CASE("cli: a directory or a FIFO where a file belongs gets one line and exit status 2, never a hang",
          "[cli][e2e]") {
  Dir d;
  const std::string dir = d.path().string();
  require_user_error(run_attn("translate -m " + dir + "/none.attn -i " + dir), "none.attn");  // the model first
  // A model file that exists, so the input is what fails.
  const auto model = fs::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz" / "seeds" / "model_file" /
                     "tiny.attn";
  REQUIRE(fs::exists(model));
  require_user_error(run_attn("translate -m " + model.string() + " -i " + dir), "is a directory");
  require_user_error(run_attn("attend -m " + model.string() + " -i " + dir + " -o " + dir + "/m.json"),
                     "is a directory");
  {
    const std::string err = (d.path() / "err.txt").string();
    const int raw = std::system((std::string(std::getenv("ATTN_BIN")) + " translate -m " + model.string() + " <" + dir +
                                 " >/dev/null 2>" + err)
                                    .c_str());
    REQUIRE(WIFEXITED(raw));
    REQUIRE(WEXITSTATUS(raw) == 2);
    REQUIRE(d.read("err.txt").find("standard input is a directory") != std::string::npos);
  }
  REQUIRE_FALSE(fs::exists(d.path() / "m.json"));
  // A FIFO as the model: rejected at once (timeout: a hang fails the test instead of stalling the suite).
  const std::string fifo = (d.path() / "model.fifo").string();
  REQUIRE(std::system(("mkfifo " + fifo).c_str()) == 0);
  require_user_error(run_attn("info " + fifo, "", "timeout 20 "), "not a regular file");
  require_user_error(run_attn("translate -m " + fifo, "hello\n", "timeout 20 "), "not a regular file");
}

TEST_CASE("cli: bad model files get one line and exit status 2", "[cli][e2e]") {
  Dir d;
  require_user_error(run_attn("translate -m " + (d.path() / "none.attn").string(), "hello\n"), "none.attn");
  const std::string junk = d.write("junk.attn", "this is not a model file at all");
  require_user_error(run_attn("translate -m " + junk, "hello\n"), "junk.attn");
  require_user_error(run_attn("info " + junk), "junk.attn");
  const std::string empty = d.write("empty.attn", "");
  require_user_error(run_attn("info " + empty), "empty.attn");
}
