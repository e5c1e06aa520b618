// Outputs are written fully or not at all:
// through symlinks, never replacing a device, nothing left by Ctrl-C, no
// partial set of outputs on failure, an unwritable -o said before the work.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "attn/model/model_file.h"
#include "child_process.h"
#include "run_attn.h"
#include "tiny_model.h"

using namespace attn;
using namespace attn::test;  // run_attn, require_user_error, shell_words, ScratchDir
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(directory)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// tools/run-tests.sh (the suite runs from the checkout: make test) on a stand-in for the test binary,
// with ATTN_TEST_JOBS=jobs: its exit status and output.
std::pair<int, std::string> run_tests_script(int jobs, const std::string& suite, const std::string& args = "") {
  const std::string command = "ATTN_TEST_JOBS=" + std::to_string(jobs) + " bash tools/run-tests.sh " + suite + " " +
                              args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  return {::pclose(pipe), out};
}

// The last line of a command's output.
std::string last_line(const std::string& out) { return out.substr(out.rfind('\n', out.size() - 2) + 1); }

}  // namespace

TEST_CASE("outputs: -o through a symlink writes its target and keeps the link", "[cli][io][e2e]") {
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  dir.write("in.txt", "red cat\nblue dog\n");
  fs::create_directory(dir / "kept");
  dir.write("kept/hyp.txt", "old\n");
  fs::create_symlink(fs::path("kept") / "hyp.txt", dir / "hyp-link.txt");
  const test::RunResult r = run_attn(shell_words({"translate", "-m", model, "-i", (dir / "in.txt").string(), "-o",
                                                  (dir / "hyp-link.txt").string()}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(fs::is_symlink(dir / "hyp-link.txt"));
  const std::string written = dir.read("kept/hyp.txt");
  REQUIRE(written != "old\n");
  REQUIRE(std::count(written.begin(), written.end(), '\n') == 2);
}

TEST_CASE("outputs: a failed output leaves no other new output; an unwritable -o fails before the work",
          "[cli][io][e2e]") {
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  dir.write("in.txt", "red cat\n");
  const std::string in = (dir / "in.txt").string();
  if (fs::exists("/dev/full")) {
    require_user_error(run_attn(shell_words({"attend", "-m", model, "-i", in, "-o", (dir / "a.json").string(), "--html",
                                             "/dev/full"})),
                       "/dev/full");
    REQUIRE_FALSE(fs::exists(dir / "a.json"));
  }
  // -o is opened before the 20,000 lines are decoded: the missing directory is said first.
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "red cat sees two big dogs\n";
  dir.write("many.txt", many);
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", (dir / "many.txt").string(), "-o",
                                           (dir / "nodir" / "x.txt").string()})),
                     "does not exist");
  const std::vector<std::string> expected{"in.txt",    "many.txt",  "run",      "train.src",
                                          "train.tgt", "valid.src", "valid.tgt"};
  REQUIRE(names_in(dir.path()) == expected);
}

TEST_CASE("outputs: SIGINT or SIGTERM during attend -o --html leaves no temporary file", "[cli][io][e2e]") {
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "red cat sees two big dogs and a small blue cat\n";
  dir.write("many.txt", many);
  for (const int sig : {SIGINT, SIGTERM}) {
    fs::create_directory(dir / "out");
    {
      test::ChildProcess attend({"attend", "-m", model, "-i", (dir / "many.txt").string(), "-o",
                                 (dir / "out" / "maps.json").string(), "--html", (dir / "out" / "maps.html").string(),
                                 "--threads", "1"},
                                dir / "attend.log");
      // Both temporaries exist from the start (opened before the work).
      REQUIRE(attend.wait_until([&] { return names_in(dir / "out").size() == 2; }));
      attend.signal(sig);
      INFO(dir.read("attend.log"));
      REQUIRE(attend.wait() == -sig);
    }
    REQUIRE(names_in(dir / "out").empty());
    fs::remove_all(dir / "out");
  }
}

TEST_CASE("outputs: messages name the flags of the command that was run", "[cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  // A line far longer than the model's positions: cut, with a warning naming translate's own flag.
  std::string long_line;
  for (int i = 0; i < 3000; ++i) long_line += "red ";
  dir.write("long.txt", long_line + "\n");
  const test::RunResult r =
      run_attn(shell_words({"translate", "-m", model, "-i", (dir / "long.txt").string(), "--max-input-len", "50000"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.find("--max-input-len") != std::string::npos);
  REQUIRE(r.err.find("--max-len ") == std::string::npos);
  require_user_error(run_attn(shell_words({"translate", "-m", model, "--max-len-a", "0", "--max-len-b", "0.5"}),
                              "red\n"),
                     "--max-len-a 0 with --max-len-b below 1");
  require_user_error(
      run_attn(shell_words({"average", "--last", "0", dir.path().string(), "-o", (dir / "avg.attn").string()})),
      "--last");
  require_user_error(run_attn(shell_words(test::tiny_train_args(dir.path(), "run2", {"--vocab-size", "-1"}))),
                     "--vocab-size");
}

TEST_CASE("inputs: NUL bytes are read as bytes with a warning; a model of NaN weights is refused", "[cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  dir.write("nul.txt", std::string("red\0cat\nblue dog\n", 17));
  test::RunResult r = run_attn(shell_words({"translate", "-m", model, "-i", (dir / "nul.txt").string()}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  REQUIRE(r.err.find("1 input lines are not valid UTF-8 or hold NUL bytes") != std::string::npos);
  {
    model::LoadedModel loaded = model::load_model_values(model);
    for (float& v : loaded.model->params().values()) v = std::numeric_limits<float>::quiet_NaN();
    model::save_model_file(dir / "nan.attn", *loaded.model, loaded.bpe);
  }
  for (const char* command : {"translate", "attend", "info"}) {
    INFO(command);
    const std::string args = std::string(command) == "info" ? shell_words({command, (dir / "nan.attn").string()})
                                                            : shell_words({command, "-m", (dir / "nan.attn").string()});
    require_user_error(run_attn(args, "red cat\n"), "NaN or infinite");
  }
}

TEST_CASE("outputs: -o /proc/self/fd/1 (what /dev/stdout leads to) is written in place", "[cli][io][e2e]") {
  // run_attn sends standard output to a regular file, which /proc/self/fd/1 leads to: a rename over it
  // would lose the output (and, as root, over /dev/stdout it replaced /dev/stdout itself; that path is
  // not used here so that a regression cannot damage the machine running the test).
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  dir.write("in.txt", "red cat\nblue dog\n");
  const test::RunResult r =
      run_attn(shell_words({"translate", "-m", model, "-i", (dir / "in.txt").string(), "-o", "/proc/self/fd/1"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

TEST_CASE("tests: tools/run-tests.sh counts a skipped test as skipped, not passed", "[cli]") {
  test::ScratchDir dir;
  // A stand-in for the suite: one test passed, one said it was skipped (Catch2 v2 counts both as passed).
  const std::string fake = dir.write("suite.sh",
                                     "#!/bin/sh\n"
                                     "printf 'attn-test-skipped\\tbrowser: draws maps\\tchromium is not installed\\n'\n"
                                     "echo 'All tests passed (5 assertions in 2 test cases)'\n");
  fs::permissions(fake, fs::perms::owner_all);
  const auto [status, out] = run_tests_script(1, fake);
  INFO(out);
  REQUIRE(status == 0);
  REQUIRE(out.find("browser: draws maps: chromium is not installed") != std::string::npos);
  REQUIRE(last_line(out) == "1 passed, 0 failed, 1 skipped\n");
}

TEST_CASE("outputs: out of memory is one line naming the running command's flags", "[cli][e2e]") {
  if (test::under_address_sanitizer())
    ATTN_SKIP("AddressSanitizer reserves more address space than the limit this test sets (ulimit -v)");
  test::ScratchDir dir;
  const std::string model = tiny_model(dir);
  std::string many;
  for (int i = 0; i < 3000; ++i) many += "red cat sees two big dogs and a small blue cat red cat sees two\n";
  dir.write("many.txt", many);
  // 3,000 sentences × beam 1,000 at once do not fit in 400 MB of address space.
  const test::RunResult r =
      run_attn(shell_words({"translate", "-m", model, "-i", (dir / "many.txt").string(), "--beam", "1000",
                            "--batch-size", "3000", "--threads", "1", "-o", (dir / "out.txt").string()}),
               "", "ulimit -v 400000; ");
  require_user_error(r, "out of memory; try a smaller --batch-size or --beam");
  REQUIRE_FALSE(fs::exists(dir / "out.txt"));
}

TEST_CASE("tests: ATTN_TEST_JOBS runs each test file once in its own process and sums what they report", "[cli]") {
  test::ScratchDir dir;
  // A stand-in for the suite with five files: one passes, one fails, one skips a case, one dies unsummarised,
  // one passes without assertions (Catch2 words that summary differently).
  // Each call leaves its last argument (the file's tag) in calls.txt.
  const std::string calls = (dir / "calls.txt").string();
  const std::string fake = dir.write(
      "suite.sh",
      "#!/bin/sh\n"
      "for a in \"$@\"; do last=$a; done\n"
      "case \" $* \" in *' --list-tags '*) printf 'All available tags:\\n   2  [#a]\\n   1  [#b]\\n"
      "   3  [#c]\\n   1  [#d]\\n   2  [#e]\\n   4  [gemm]\\n6 tags\\n'; exit 0;; esac\n"
      "echo \"$last\" >> " +
          calls +
          "\n"
          "case $last in\n"
          "  '[#a]') echo 'All tests passed (4 assertions in 2 test cases)' ;;\n"
          "  '[#b]') echo 'test cases: 1 | 1 failed'; exit 1 ;;\n"
          "  '[#c]') printf 'attn-test-skipped\\tc: one\\tno GPU\\n'; echo 'All tests passed (3 assertions in 3 test cases)' ;;\n"
          "  '[#d]') echo 'half a report'; exit 134 ;;\n"
          "  '[#e]') printf 'test cases: 2 | 2 passed\\nassertions: - none -\\n' ;;\n"
          "  *) echo 'All tests passed (1 assertion in 1 test case)' ;;\n"
          "esac\n");
  fs::permissions(fake, fs::perms::owner_all);
  const auto calls_made = [&] {
    std::vector<std::string> lines;
    std::ifstream in(calls);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  const auto [status, out] = run_tests_script(2, fake, "'~[big]' --durations yes");
  INFO(out);
  REQUIRE(status != 0);
  REQUIRE(out.find("suite.sh [#d] ended with status 134 before its summary") != std::string::npos);
  REQUIRE(out.find("half a report") != std::string::npos);
  REQUIRE(last_line(out) == "6 passed, 2 failed, 1 skipped\n");
  REQUIRE(calls_made() == std::vector<std::string>{"[#a]", "[#b]", "[#c]", "[#d]", "[#e]"});

  // A spec with a comma (an OR) cannot be ANDed with a file's tag: the suite runs as one process.
  fs::remove(calls);
  const auto [one_status, one_out] = run_tests_script(2, fake, "'[a],[b]'");
  INFO(one_out);
  REQUIRE(one_status == 0);
  REQUIRE(last_line(one_out) == "1 passed, 0 failed, 0 skipped\n");
  REQUIRE(calls_made() == std::vector<std::string>{"[a],[b]"});
}
