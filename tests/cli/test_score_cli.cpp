// `attn score` end to end: the binary of this build (ATTN_BIN, set by
// `make test`) on small files in a private temporary folder.
#include "../support.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using attn::test::ScratchDir;

struct Run {
  int status = -1;
  std::string out, err;
};

// Runs `attn score <args>` in `dir` with `stdin_text` on standard input.
Run run_score(const ScratchDir& dir, const std::string& args, const std::string& stdin_text = "") {
  const char* bin = std::getenv("ATTN_BIN");
  INFO("ATTN_BIN is set by `make test`; run the suite through make");
  REQUIRE(bin != nullptr);
  dir.write("stdin.txt", stdin_text);
  const std::string cmd = "cd '" + dir.path().string() + "' && '" + fs::absolute(bin).string() + "' score " + args +
                          " <stdin.txt >stdout.txt 2>stderr.txt";
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, dir.read("stdout.txt"), dir.read("stderr.txt")};
}

void require_one_line_error(const Run& run, const std::string& needle) {
  INFO("stderr: " << run.err);
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.err.find(needle) != std::string::npos);
}

// sacreBLEU's README example.
const std::string kHyps = "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n";
const std::string kRef1 = "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n";
const std::string kRef2 = "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n";

}  // namespace

TEST_CASE("attn score prints sacreBLEU's JSON for BLEU and chrF", "[eval][cli]") {
  ScratchDir dir;
  dir.write("hyp.txt", kHyps);
  dir.write("r1.txt", kRef1);
  dir.write("r2.txt", kRef2);
  const Run run = run_score(dir, "-r r1.txt r2.txt -i hyp.txt");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  const auto json = nlohmann::json::parse(run.out);
  REQUIRE(json.size() == 2);
  CHECK(json[0]["name"] == "BLEU");
  CHECK(std::abs(json[0]["score"].get<double>() - 48.530827) < 1e-6);
  CHECK(json[0]["verbose_score"] == "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  CHECK(json[0]["signature"].get<std::string>().rfind("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:", 0) ==
        0);
  CHECK(json[1]["name"] == "chrF2");
  CHECK(std::abs(json[1]["score"].get<double>() - 59.73) < 0.005);
}

TEST_CASE("attn score reads stdin, repeats --ref, and prints text lines", "[eval][cli]") {
  ScratchDir dir;
  dir.write("r1.txt", kRef1);
  dir.write("r2.txt", kRef2);
  const Run run = run_score(dir, "--ref r1.txt --ref r2.txt -m bleu -f text -w 2", kHyps);
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  CHECK(run.out.rfind("BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:", 0) == 0);
  CHECK(run.out.find(" = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n") !=
        std::string::npos);
  CHECK(std::count(run.out.begin(), run.out.end(), '\n') == 1);

  const Run only = run_score(dir, "-r r1.txt r2.txt -b", kHyps);
  CHECK(only.status == 0);
  CHECK(only.out == "48.5\n59.7\n");
}

TEST_CASE("attn score: a perfect hypothesis and CRLF files", "[eval][cli]") {
  ScratchDir dir;
  dir.write("ref.txt", "Ein Hund läuft.\r\nZwei Kinder spielen im Park.\r\n");
  dir.write("hyp.txt", "Ein Hund läuft.\nZwei Kinder spielen im Park.");  // no final newline
  const Run run = run_score(dir, "-r ref.txt -i hyp.txt -f text -w 2");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  CHECK(run.out.find(" = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 10 ref_len = 10)") !=
        std::string::npos);
  CHECK(run.out.find("chrF2|") != std::string::npos);
  CHECK(run.out.find(" = 100.00\n") != std::string::npos);
}

TEST_CASE("attn score refuses bad input with one line and status 2", "[eval][cli]") {
  ScratchDir dir;
  dir.write("hyp.txt", kHyps);
  dir.write("ref.txt", kRef1);
  dir.write("short.txt", "one line\n");
  dir.write("bad.txt", "fine\nbroken \xc3\x28 here\nfine\n");
  dir.write("blank.txt", "a\n  \nc\n");
  require_one_line_error(run_score(dir, "-r missing.txt -i hyp.txt"), "cannot open 'missing.txt'");
  require_one_line_error(run_score(dir, "-r ref.txt -i missing.txt"), "cannot open 'missing.txt'");
  require_one_line_error(run_score(dir, "-r ref.txt -i short.txt"),
                         "the hypotheses ('short.txt') have 1 lines but the reference 'ref.txt' has 3");
  require_one_line_error(run_score(dir, "-r short.txt", kHyps),
                         "the hypotheses (standard input) have 3 lines but the reference 'short.txt' has 1");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt -m bleu,ter"), "unknown metric 'ter'");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt --tokenize intl"), "unknown tokenizer 'intl'");
  require_one_line_error(run_score(dir, "-r ref.txt -i bad.txt"), "'bad.txt' line 2 is not valid UTF-8");
  require_one_line_error(run_score(dir, "-r bad.txt -i hyp.txt"), "'bad.txt' line 2 is not valid UTF-8");
  require_one_line_error(run_score(dir, "-r blank.txt -i hyp.txt"), "line 2 is empty in every reference file");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt -f xml"), "--format");
  require_one_line_error(run_score(dir, "-i hyp.txt"), "--ref is required");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt --smooth-method add-n"), "unknown smoothing");
}
