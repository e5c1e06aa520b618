// What users do to attn that is not a bad corpus or a bad model file: resume
// with the wrong --arch, fill the disk, and feed translate any bytes on stdin.
#include <filesystem>
#include <map>
#include <string>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "attn/core/safetensors.h"
#include "run_attn.h"

using namespace attn;
using test::require_user_error;
using test::run_attn;
using test::shell_words;
namespace fs = std::filesystem;

namespace {

// A tiny transformer trained for a few updates in dir/run.
void train_tiny_model(const test::ScratchDir& dir) {
  test::write_tiny_corpus(dir.path(), "train", 200, 5);
  test::write_tiny_corpus(dir.path(), "valid", 10, 6);
  const test::RunResult r = run_attn(shell_words(test::tiny_train_args(dir.path(), "run", {"--max-updates", "4"})));
  INFO(r.err);
  REQUIRE(r.status == 0);
}

std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) found.push_back(e.path().string());
  return found;
}

}  // namespace

TEST_CASE("faults: resuming a model of another arch is one line, exit status 2, the run untouched",
          "[cli][train][e2e]") {
  test::ScratchDir dir;
  train_tiny_model(dir);
  const fs::path last = dir.path() / "run" / "last.attn";
  const std::string before = test::slurp(last);
  require_user_error(run_attn(shell_words(test::tiny_train_args(dir.path(), "run", {"--arch", "convsan"}))),
                     "holds a 'transformer' model but --arch is 'convsan'");
  require_user_error(run_attn(shell_words(test::tiny_train_args(dir.path(), "other",
                                                                {"--arch", "fastdisa", "--resume", last.string()}))),
                     "holds a 'transformer' model but --arch is 'fastdisa'");
  REQUIRE(test::slurp(last) == before);
  REQUIRE_FALSE(fs::exists(dir.path() / "other" / "last.attn"));
}

// Writes `to`: the tensors and metadata of the model file `from`, with
// `drop` left out and `reshape` stored flat with one element fewer.
void rewrite_model(const fs::path& from, const fs::path& to, const std::string& drop, const std::string& reshape) {
  const SafetensorsFile file = SafetensorsFile::read(from);
  std::vector<TensorRef> kept;
  for (const std::string& name : file.names()) {
    if (name == drop) continue;
    const std::span<const float> data = file.data(name);
    if (name == reshape)
      kept.push_back({name, Shape{static_cast<std::int64_t>(data.size()) - 1}, data.first(data.size() - 1)});
    else
      kept.push_back({name, file.shape(name), data});
  }
  std::map<std::string, std::string> metadata = file.metadata();
  for (const char* written_by_the_writer : {"format", "format_version", "crc32", "header_crc32"})
    metadata.erase(written_by_the_writer);
  write_safetensors(to, kept, metadata);
}

TEST_CASE("faults: a model file missing a tensor, or with one of the wrong shape, is one line, exit status 2",
          "[cli][io][e2e]") {
  test::ScratchDir dir;
  train_tiny_model(dir);
  const fs::path best = dir.path() / "run" / "best.attn";
  const std::vector<std::string> names = SafetensorsFile::read(best).names();
  REQUIRE(names.size() > 2);
  const std::string victim = names[names.size() / 2];
  const fs::path missing = dir.path() / "missing.attn", reshaped = dir.path() / "reshaped.attn";
  rewrite_model(best, missing, victim, "");
  rewrite_model(best, reshaped, "", victim);
  for (const char* command : {"info ", "translate -m "}) {
    require_user_error(run_attn(command + missing.string(), "red cat\n"), "has no tensor '" + victim + "'");
    require_user_error(run_attn(command + reshaped.string(), "red cat\n"), victim);
  }
}

TEST_CASE("faults: a full disk is one line, exit status 2, and the old checkpoint stays", "[cli][train][io][e2e]") {
  test::ScratchDir dir;
  train_tiny_model(dir);
  const fs::path last = dir.path() / "run" / "last.attn", best = dir.path() / "run" / "best.attn";
  const std::string last_before = test::slurp(last), best_before = test::slurp(best);
  REQUIRE(last_before.size() > 100000);  // so the limit below falls inside the checkpoint

  // 60 blocks (30 KB in dash's 512-byte blocks, 60 KB in bash's): the log fits, a checkpoint does not.
  const auto r =
      run_attn(shell_words(test::tiny_train_args(dir.path(), "run", {"--max-updates", "8"})), "", "ulimit -f 60; ");
  require_user_error(r, "File too large");
  REQUIRE(r.err.find("cannot write " + last.string()) != std::string::npos);
  REQUIRE(test::slurp(last) == last_before);
  REQUIRE(test::slurp(best) == best_before);
  REQUIRE(leftovers(dir.path() / "run").empty());

  // A device that is full: translate reports it, and /dev/full stays a device.
  if (fs::exists("/dev/full")) {
    require_user_error(run_attn("translate -m " + best.string() + " -o /dev/full", "red cat\n"),
                       "No space left on device");
    REQUIRE(fs::is_character_file("/dev/full"));
  }
}

TEST_CASE("faults: translate on stdin keeps one output line per input line, whatever the bytes", "[cli][decode][e2e]") {
  test::ScratchDir dir;
  train_tiny_model(dir);
  std::string long_line;
  for (int i = 0; i < 3000; ++i) long_line += "red cat ";
  const std::string input = "red cat sees dog\n"
                            "\n" +
                            long_line + "\n" + std::string("\xff\xfe\x00 bytes\x80", 10) + "\n" +
                            "blue dog\r\n"
                            "\n"
                            "two";  // no final newline
  const auto r = run_attn("translate -m " + (dir.path() / "run" / "best.attn").string() + " --beam 2", input);
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 7);
  REQUIRE(r.err.find("1 input lines longer than 250 subwords were truncated") != std::string::npos);
  REQUIRE(r.err.find("1 input lines are not valid UTF-8") != std::string::npos);
}

TEST_CASE("faults: every command that writes to a full standard output exits 2 and says so", "[cli][e2e]") {
  if (!fs::exists("/dev/full")) {
    ATTN_SKIP("no /dev/full on this machine");
  }
  test::ScratchDir dir;
  train_tiny_model(dir);
  const std::string model = (dir.path() / "run" / "best.attn").string(), input = dir.write("in.txt", "red cat\n");
  const char* bin = std::getenv("ATTN_BIN");
  for (const std::string& args :
       {"info " + model, "translate -m " + model + " -i " + input, "translate -m " + model + " -i " + input + " -o -",
        "attend -m " + model + " -i " + input, "attend -m " + model + " -i " + input + " --jsonl",
        "report " + (dir.path() / "run").string() + " -o -", "report " + (dir.path() / "run").string() + " --json",
        "score --ref " + input + " -i " + input}) {
    INFO(args);
    const std::string err = (dir.path() / "err.txt").string();
    const int raw = std::system((std::string(bin) + " " + args + " >/dev/full 2>" + err).c_str());
    REQUIRE(WIFEXITED(raw));
    REQUIRE(WEXITSTATUS(raw) == 2);
    const std::string said = test::slurp(err);
    REQUIRE(said.find("standard output") != std::string::npos);
    REQUIRE(std::count(said.begin(), said.end(), '\n') == 1);
  }
}
