// Every command that writes checks every output target before any work
// (core/output_preflight.h) and keeps a replaced file's permissions: a
// directory, an input named as the output, two outputs of one name, a name
// too long for the directory are refused at once; any legal name works.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../support.h"
#include "run_attn.h"
#include "tiny_model.h"

using namespace attn;
using namespace attn::test;  // run_attn, require_user_error, shell_words, ScratchDir, tiny_model
namespace fs = std::filesystem;

namespace {

std::string many_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "red cat sees two big dogs\n";
  return text;
}

bool has_temporary(const fs::path& directory) {
  for (const auto& e : fs::directory_iterator(directory))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("preflight: an output that is also an input is refused before any work, the input untouched",
          "[cli][io][preflight][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string before = slurp(model);
  const std::string in = dir.write("in.txt", "red cat\n");
  // translate -m mo.attn -o mo.attn replaced the model by its translations.
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", in, "-o", model})), "same file as -m");
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", in, "-o", in})), "same file as -i");
  require_user_error(run_attn(shell_words({"attend", "-m", model, "-i", in, "--html", model})), "same file as -m");
  require_user_error(
      run_attn(shell_words({"attend", "-m", model, "-i", in, "-o", in, "--html", (dir / "p.html").string()})),
      "same file as -i");
  require_user_error(run_attn(shell_words({"average", model, "-o", model})), "same file as the input");
  require_user_error(run_attn(shell_words({"quantize", model, "-o", model})), "same file as the model");
  require_user_error(
      run_attn(shell_words({"score", "-r", in, "-i", in, "--paired-bs", "-i", model, "--dump-resamples", in})),
      "same file as -r");
  REQUIRE(slurp(model) == before);
  REQUIRE(slurp(in) == "red cat\n");
  REQUIRE_FALSE(fs::exists(dir / "p.html"));
}

TEST_CASE("preflight: -o or --html naming a directory is refused before the decode; attend writes neither file",
          "[cli][io][preflight][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string in = dir.write("many.txt", many_lines(20000));
  fs::create_directory(dir / "out");
  const std::string out = (dir / "out").string(), json = (dir / "a.json").string();
  // Refused before 20,000 lines are read, encoded and decoded: the message says what the target is.
  const std::vector<std::vector<std::string>> cases{{"translate", "-m", model, "-i", in, "-o", out},
                                                    {"attend", "-m", model, "-i", in, "-o", json, "--html", out}};
  for (const std::vector<std::string>& args : cases) {
    require_user_error(run_attn(shell_words(args)), args[args.size() - 2] + " " + out + ": is a directory");
    REQUIRE(fs::is_empty(dir / "out"));
    REQUIRE_FALSE(fs::exists(json));  // both or neither
    REQUIRE_FALSE(has_temporary(dir.path()));
  }
}

TEST_CASE("preflight: a 255-byte output name works; a longer one is refused before the work",
          "[cli][io][preflight][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string in = dir.write("in.txt", "red cat\nblue dog\n");
  for (const std::size_t length : {245, 250, 255}) {
    const fs::path out = dir / std::string(length, 'h');
    const RunResult r = run_attn(shell_words({"translate", "-m", model, "-i", in, "-o", out.string()}));
    INFO(length << ": " << r.err);
    REQUIRE(r.status == 0);
    const std::string written = slurp(out);
    REQUIRE(std::count(written.begin(), written.end(), '\n') == 2);
    REQUIRE_FALSE(has_temporary(dir.path()));
  }
  const fs::path too_long = dir / std::string(256, 'h');
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", in, "-o", too_long.string()})),
                     "the file name is 256 bytes");
}

TEST_CASE("outputs: replacing a file keeps its permissions", "[cli][io][preflight][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string in = dir.write("in.txt", "red cat\n");
  const std::string out = dir.write("hyp.txt", "old\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);  // 600: private
  const RunResult r = run_attn(shell_words({"translate", "-m", model, "-i", in, "-o", out}), "", "umask 022; ");
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(slurp(out) != "old\n");
  REQUIRE((fs::status(out).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("preflight: train's log named without a folder is taken as typed, from the working directory",
          "[cli][io][preflight][train][nothing-lost-4][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  // Each name relative to the working directory, the most ordinary one first.
  fs::create_directories(dir / "runs");
  // The commands run in dir: the binary by its absolute name.
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  ::setenv("ATTN_BIN", fs::absolute(bin).c_str(), 1);
  const std::vector<std::string> logs{"log.jsonl", "./dot.jsonl", "runs/../up.jsonl"};
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const std::string& log = logs[i];
    const RunResult r = run_attn(shell_words(tiny_train_args(dir.path(), "run" + std::to_string(i),
                                                             {"--max-updates", "2", "--log-json", log})),
                                 "", "cd " + shell_words({dir.path().string()}) + " && ");
    INFO(log << ": " << r.err);
    REQUIRE(r.status == 0);
    REQUIRE(slurp(dir / log).find(R"("split":"model")") != std::string::npos);
  }
}

TEST_CASE("preflight: no output of any command replaces a model file or a checkpoint, or takes a checkpoint's name",
          "[cli][io][preflight][nothing-lost-4][e2e]") {
  ScratchDir dir;
  const std::string last = tiny_model(dir);
  const fs::path run = dir / "run";
  const std::string best = (run / "best.attn").string(), in = dir.write("in.txt", "red cat\n");
  const std::string last_before = slurp(last), best_before = slurp(best);
  const auto train = [&](const std::string& save, const std::string& log) {
    return run_attn(shell_words(tiny_train_args(dir.path(), save, {"--max-updates", "3", "--log-json", log})));
  };
  // Text outputs onto a model or a checkpoint, by every command that writes.
  const std::vector<std::vector<std::string>> onto_models{
      {"translate", "-m", best, "-i", in, "-o", last},
      {"attend", "-m", best, "-i", in, "-o", last},
      {"attend", "-m", best, "-i", in, "-o", (dir / "a.json").string(), "--html", last},
      {"score", "-r", in, "-i", in, "--paired-bs", "-i", dir.write("in2.txt", "blue dog\n"), "--dump-resamples", last},
      {"report", run.string(), "-o", best}};
  for (const auto& args : onto_models) require_user_error(run_attn(shell_words(args)), "is a model file");
  require_user_error(train("other", last), "--log-json " + last + ": is a model file");
  // A log named as one of its own run's checkpoints would be replaced by it.
  require_user_error(train("new", (dir / "new" / "last.attn").string()), "which this command writes too");
  require_user_error(train("new", (dir / "new" / "ckpt.3.attn").string()), ".attn is the model files' suffix");
  // A model output may replace what average or quantize made, never what attn train wrote.
  for (const char* command : {"average", "quantize"})
    for (const std::string& trained : {last, best})
      require_user_error(run_attn(shell_words({command, trained == last ? best : last, "-o", trained})),
                         "is a model attn train wrote");
  for (int again = 0; again < 2; ++again) {
    for (const char* command : {"average", "quantize"}) {
      const RunResult r =
          run_attn(shell_words({command, last, "-o", (dir / (std::string(command) + ".attn")).string()}));
      INFO(r.err);
      REQUIRE(r.status == 0);
    }
  }
  require_user_error(run_attn(shell_words({"translate", "-m", best, "-i", in, "-o", (dir / "q.attn").string()})),
                     ".attn is the model files' suffix");
  REQUIRE(slurp(last) == last_before);
  REQUIRE(slurp(best) == best_before);
  REQUIRE_FALSE(fs::exists(dir / "other"));
  REQUIRE_FALSE(fs::exists(dir / "new"));
  REQUIRE_FALSE(fs::exists(dir / "a.json"));
}
