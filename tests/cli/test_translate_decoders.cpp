// translate --decoders: batches decoded on several threads at once give the
// same output, in the input's order, as one decoder does.
#include <sstream>
#include <string>

#include "tiny_model.h"

using namespace attn;
using namespace attn::test;

namespace {

// The n-best lines without their scores ("i ||| translation"): a sentence
// searched alone gives the same words as in a batch, its score within rounding.
std::string without_scores(const std::string& nbest) {
  std::istringstream lines(nbest);
  std::string out;
  for (std::string line; std::getline(lines, line);) out += line.substr(0, line.rfind(" ||| ")) + '\n';
  return out;
}

}  // namespace

TEST_CASE("translate: any --decoders count gives one decoder's output, line for line", "[cli][translate][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  // Lengths that sort into several batches of 2, an empty line among them:
  // each line's n-best scores are its own, so a line answered in another's place shows.
  dir.write("in.txt", "red cat\nblue dog sits on the mat\n\nthe cat\na red dog sits\ncat\nthe blue cat sits on a red "
                      "mat\ndog sits\nred\n");
  const std::string input = (dir.path() / "in.txt").string();
  for (const char* type : {"fp32", "int8"}) {
    const auto translate = [&](const char* decoders, const char* batch_size = "2") {
      return run_attn(shell_words({"translate", "-m", model, "-i", input, "--compute-type", type, "--batch-size",
                                   batch_size, "--nbest", "3", "--threads", "2", "--decoders", decoders}));
    };
    const RunResult one = translate("1");
    INFO(type << ": " << one.err);
    REQUIRE(one.status == 0);
    REQUIRE(std::count(one.out.begin(), one.out.end(), '\n') == 3 * 8 + 1);  // the empty line: one entry
    const RunResult alone = translate("1", "1");
    REQUIRE(alone.status == 0);
    REQUIRE(without_scores(one.out) == without_scores(alone.out));
    for (const char* decoders : {"2", "3", "0"}) {
      const RunResult many = translate(decoders);
      INFO("--decoders " << decoders << ": " << many.err);
      REQUIRE(many.status == 0);
      REQUIRE(many.out == one.out);
    }
  }
}

TEST_CASE("translate: --decoders is capped by --threads, as attn serve caps it, and says so",
          "[cli][translate][nothing-lost-4][e2e]") {
  if (under_address_sanitizer())
    ATTN_SKIP("AddressSanitizer reserves more address space than the limit this test sets (ulimit -v)");
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  std::string many;
  for (int i = 0; i < 500; ++i) many += "red cat sees two big dogs\n";
  const std::string input = dir.write("many.txt", many);
  // 500 batches of one: 500 decoder threads would reserve 500 stacks (4 GB of address space, past the
  // 400 MB allowed here); one thread, as --threads 1 asks, needs a few MB.
  const RunResult r = run_attn(shell_words({"translate", "-m", model, "-i", input, "--threads", "1", "--decoders",
                                            "4096", "--batch-size", "1", "-o", (dir / "out.txt").string()}),
                               "", "ulimit -v 400000; ");
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.find("--decoders 4096 is more than --threads 1; decoding with 1 decoder") != std::string::npos);
  const std::string out = slurp(dir / "out.txt");
  REQUIRE(std::count(out.begin(), out.end(), '\n') == 500);
  std::string help;  // words joined by one space: the help wraps its lines
  std::istringstream words(run_attn("translate --help").out);
  for (std::string word; words >> word;) help += word + ' ';
  REQUIRE(help.find("at most --threads decoders") != std::string::npos);
}
