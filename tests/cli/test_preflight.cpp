// Every command that writes checks every output target before any work
// (core/output_preflight.h) and keeps a replaced file's permissions: a
// directory, an input named as the output, two outputs of one name, a name
// too long for the directory are refused at once; any legal name works.
#include <sys/stat.h>

#include <algorithm>
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
          "[cli][io][preflight]") {
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
          "[cli][io][preflight]") {
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

TEST_CASE("preflight: a 255-byte output name works; a longer one is refused before the work", "[cli][io][preflight]") {
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

TEST_CASE("outputs: replacing a file keeps its permissions", "[cli][io][preflight]") {
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
