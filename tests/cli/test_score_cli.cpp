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

TEST_CASE("attn score prints sacreBLEU's JSON for BLEU and chrF", "[eval][cli][e2e]") {
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
  CHECK(json[0]["signature"].get<std::string>().rfind("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:", 0) == 0);
  CHECK(json[1]["name"] == "chrF2");
  CHECK(std::abs(json[1]["score"].get<double>() - 59.73) < 0.005);
}

TEST_CASE("attn score reads stdin, repeats --ref, and prints text lines", "[eval][cli][e2e]") {
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

TEST_CASE("attn score: a perfect hypothesis and CRLF files", "[eval][cli][e2e]") {
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

TEST_CASE("attn score refuses bad input with one line and status 2", "[eval][cli][e2e]") {
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
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt -m bleu,bert"), "unknown metric 'bert'");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt --tokenize ja-mecab"), "unknown tokenizer 'ja-mecab'");
  require_one_line_error(run_score(dir, "-r ref.txt -i bad.txt"), "'bad.txt' line 2 is not valid UTF-8");
  require_one_line_error(run_score(dir, "-r bad.txt -i hyp.txt"), "'bad.txt' line 2 is not valid UTF-8");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt -f xml"), "--format");
  require_one_line_error(run_score(dir, "-i hyp.txt"), "--ref is required");
  require_one_line_error(run_score(dir, "-r ref.txt -i hyp.txt --smooth-method add-n"), "unknown smoothing");
}

TEST_CASE("attn score: a blank reference line is scored as sacreBLEU scores it: an empty reference",
          "[eval][cli][e2e]") {
  // An empty hypothesis against an empty reference adds nothing to any corpus
  // statistic, so the score is that of the other lines alone.
  ScratchDir dir;
  dir.write("hyp3.txt", "the cat sat on the mat\n\na dog barks at the red car\n");
  dir.write("ref3.txt", "the cat sat on a mat\n  \na dog barked at a red car\n");
  dir.write("hyp2.txt", "the cat sat on the mat\na dog barks at the red car\n");
  dir.write("ref2.txt", "the cat sat on a mat\na dog barked at a red car\n");
  const Run with_blank = run_score(dir, "-r ref3.txt -i hyp3.txt -m bleu,chrf,ter -b -w 6");
  const Run without = run_score(dir, "-r ref2.txt -i hyp2.txt -m bleu,chrf,ter -b -w 6");
  INFO(with_blank.err);
  REQUIRE(with_blank.status == 0);
  REQUIRE(without.status == 0);
  REQUIRE(with_blank.out == without.out);
}

TEST_CASE("attn score: one reference file is nrefs:1 in every signature, blank lines or not", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("hyp.txt", "the cat sat on the mat\n\na dog barks\n");
  dir.write("ref.txt", "the cat sat on a mat\n\na dog barked\n");
  dir.write("blank.txt", "\n\n\n");
  for (const char* ref : {"ref.txt", "blank.txt"}) {
    const Run run = run_score(dir, std::string("-r ") + ref + " -i hyp.txt -m bleu,chrf,ter -f text");
    INFO(ref << ": " << run.err << run.out);
    REQUIRE(run.status == 0);
    REQUIRE(attn::test::count_occurrences(run.out, "nrefs:1|") == 3);
    REQUIRE(run.out.find("nrefs:var") == std::string::npos);
    REQUIRE(run.out.find("nrefs:0") == std::string::npos);
  }
}

TEST_CASE("attn score adds TER, chrF++ and the intl tokenizer with sacreBLEU's names", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("hyp.txt", "d e f g h a b c\n");
  dir.write("ref.txt", "a b c d e f g h\n");
  const Run run = run_score(dir, "-r ref.txt -i hyp.txt -m bleu,chrf,ter --chrf-word-order 2 --tok intl");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  const auto json = nlohmann::json::parse(run.out);
  REQUIRE(json.size() == 3);
  CHECK(json[0]["tok"] == "intl");
  CHECK(json[1]["name"] == "chrF2++");
  CHECK(json[1]["nw"] == "2");
  CHECK(json[2]["name"] == "TER");
  CHECK(json[2]["score"].get<double>() == 12.5);  // sacreBLEU's test_ter: one shift fixes it
  CHECK(json[2]["signature"].get<std::string>().rfind("nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:",
                                                      0) == 0);
}

TEST_CASE("attn score --sentence-level prints one JSON line per segment", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("ref.txt", "producţia de zahăr brut se exprimă în zahăr alb;\na b c d e f g h\n");
  dir.write("hyp.txt", "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;\nd e f g h a b c\n");
  const Run run = run_score(dir, "-r ref.txt -i hyp.txt -m bleu,ter --sentence-level");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  std::istringstream lines(run.out);
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(lines, line)) rows.push_back(nlohmann::json::parse(line));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["segment"] == 1);
  CHECK(std::abs(rows[0]["BLEU"].get<double>() - 8.493) < 1e-3);  // sacreBLEU's test_sentence_bleu
  CHECK(rows[1]["TER"].get<double>() == 12.5);
}

TEST_CASE("attn score --paired-bs prints every system with CI and p-value", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("ref.txt", kRef1);
  dir.write("base.txt", kHyps);
  dir.write("same.txt", kHyps);
  dir.write("ref_as_sys.txt", kRef1);
  const Run run = run_score(dir, "-r ref.txt -i base.txt same.txt ref_as_sys.txt -m bleu,chrf,ter --paired-bs");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  const auto json = nlohmann::json::parse(run.out);
  REQUIRE(json.size() == 3);
  CHECK(json[0]["system"] == "Baseline: base.txt");
  CHECK(json[0]["BLEU"]["p_value"].is_null());
  CHECK(json[0]["BLEU"]["signature"].get<std::string>().rfind("nrefs:1|bs:1000|seed:12345|case:mixed|", 0) == 0);
  CHECK(json[1]["BLEU"]["score"] == json[0]["BLEU"]["score"]);
  CHECK(json[1]["BLEU"]["p_value"].get<double>() == 1.0 / 1001);  // identical systems: sacreBLEU's smallest p
  CHECK(json[2]["BLEU"]["score"].get<double>() == Approx(100.0).margin(1e-9));
  CHECK(json[2]["TER"]["score"].get<double>() == 0.0);
  CHECK(json[0]["chrF2"]["ci"].get<double>() > 0.0);

  const Run text = run_score(dir, "-r ref.txt -i base.txt -i ref_as_sys.txt --paired-ar --paired-ar-n 99 -f text");
  INFO("stderr: " << text.err);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("Baseline: base.txt") != std::string::npos);
  CHECK(text.out.find("Paired approximate randomization test with 99 trials") != std::string::npos);
  CHECK(text.out.find("|ar:99|seed:12345|") != std::string::npos);
}

TEST_CASE("attn score --paired-bs agrees with tools/sacrebleu_ref.py paired on the same draws", "[eval][cli][e2e]") {
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  ScratchDir dir;
  dir.write("ref.txt", kRef1);
  dir.write("base.txt", kHyps);
  dir.write("other.txt", "The dog bit a man.\nIt was not surprising.\nThe man bit him.\n");
  const std::string tool = fs::absolute("tools/sacrebleu_ref.py").string();
  REQUIRE(fs::exists(tool));
  for (const std::string test : {"--paired-bs --paired-bs-n 300", "--paired-ar --paired-ar-n 500"}) {
    const Run run = run_score(dir, "-r ref.txt -i base.txt other.txt ref.txt -m bleu,chrf,ter " + test +
                                       " --seed 7 --dump-resamples draws.json");
    INFO("stderr: " << run.err);
    REQUIRE(run.status == 0);
    const std::string check = "python3 '" + tool + "' paired '" + (dir.path() / "draws.json").string() + "' >/dev/null";
    CHECK(std::system(check.c_str()) == 0);
  }
}

TEST_CASE("attn score --by-length prints scores per reference-length bucket", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("ref.txt", "a b c\n" + std::string("w w w w w w w w w w w w\n"));
  dir.write("hyp.txt", "a b c\nw w w w w w w w w w w w\n");
  const Run run = run_score(dir, "-r ref.txt -i hyp.txt --by-length");
  INFO("stderr: " << run.err);
  REQUIRE(run.status == 0);
  const auto json = nlohmann::json::parse(run.out);
  REQUIRE(json["by_length"].size() == 6);
  CHECK(json["by_length"][0]["bucket"] == "1-10");
  CHECK(json["by_length"][0]["segments"] == 1);
  CHECK(json["by_length"][0]["words"] == 3);
  CHECK(json["by_length"][1]["BLEU"].get<double>() == Approx(100.0).margin(1e-9));
  CHECK(json["by_length"][2]["BLEU"].is_null());
  const Run text = run_score(dir, "-r ref.txt -i hyp.txt --by-length -f text");
  CHECK(text.out.find("11-20") != std::string::npos);
}

TEST_CASE("attn score refuses contradicting modes with one line and status 2", "[eval][cli][e2e]") {
  ScratchDir dir;
  dir.write("ref.txt", kRef1);
  dir.write("a.txt", kHyps);
  dir.write("b.txt", kHyps);
  dir.write("short.txt", "one line\n");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt --paired-bs"), "paired tests compare systems");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt --paired-ar"), "paired tests compare systems");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt --paired-bs --paired-ar"), "exclude each other");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt short.txt --paired-bs"),
                         "the hypotheses ('short.txt') have 1 lines but the reference 'ref.txt' has 3");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt --sentence-level"), "--sentence-level scores one");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt --sentence-level --by-length"), "--by-length cannot");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt --by-length"), "--by-length scores one");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt a.txt"), "'a.txt' is given twice");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt a.txt --paired-bs"), "besides the baseline");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt --tokenize zh"), "unknown tokenizer 'zh'");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt -m bleu,meteor"), "unknown metric 'meteor'");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt --paired-bs --paired-bs-n 0"), "--paired-bs-n");
  require_one_line_error(run_score(dir, "-r ref.txt -i a.txt b.txt -b"), "--score-only");
}
