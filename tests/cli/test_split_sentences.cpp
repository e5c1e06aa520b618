// translate --split-sentences: a line of several sentences is
// translated sentence by sentence and joined again; one output line per input
// line whatever the split; --nbest above 1 is refused with it.
#include <string>

#include <nlohmann/json.hpp>

#include "tiny_model.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("translate --split-sentences: each sentence alone, joined again on its line", "[cli][split][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string alone = dir.write("alone.txt", "Red cat sits.\nBlue dog runs.\n");
  const std::string joined = dir.write("joined.txt", "Red cat sits. Blue dog runs.\n\nRed cat sits.\n");
  const RunResult one_by_one = run_attn(shell_words({"translate", "-m", model, "-i", alone}));
  const RunResult split = run_attn(shell_words({"translate", "-m", model, "-i", joined, "--split-sentences"}));
  REQUIRE(one_by_one.status == 0);
  REQUIRE(split.status == 0);
  const std::string first = one_by_one.out.substr(0, one_by_one.out.find('\n'));
  const std::string second = one_by_one.out.substr(first.size() + 1, one_by_one.out.size() - first.size() - 2);
  REQUIRE(split.out == first + " " + second + "\n\n" + first + "\n");
  // A truncation warning counts what was cut: sentences, not input lines.
  std::string long_sentence = "Red";
  for (int i = 0; i < 300; ++i) long_sentence += " cat dog";
  const std::string two_long = dir.write("two_long.txt", long_sentence + ". " + long_sentence + ".\n");
  const RunResult cut = run_attn(shell_words({"translate", "-m", model, "-i", two_long, "--split-sentences"}));
  INFO(cut.err);
  REQUIRE(cut.status == 0);
  REQUIRE(cut.err.find("2 input sentences longer than 250 subwords were truncated") != std::string::npos);
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", joined, "--split-sentences", "--beam", "4",
                                           "--nbest", "2"})),
                     "--split-sentences");
}

TEST_CASE("attend --split-sentences: one map per sentence, labelled with its line and place", "[cli][split][e2e]") {
  ScratchDir dir;
  const std::string model = tiny_model(dir);
  const std::string joined = dir.write("joined.txt", "Red cat sits. Blue dog runs.\nRed cat sits.\n");
  const RunResult r = run_attn(shell_words({"attend", "-m", model, "-i", joined, "--split-sentences"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const nlohmann::json& sentences = doc["sentences"];
  REQUIRE(sentences.size() == 3);
  const int want[3][2] = {{0, 0}, {0, 1}, {1, 0}};
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(sentences[i]["index"] == i);
    REQUIRE(sentences[i]["line"] == want[i][0]);
    REQUIRE(sentences[i]["line_sentence"] == want[i][1]);
  }
  REQUIRE(sentences[1]["source"] == "Blue dog runs.");
  require_user_error(run_attn(shell_words({"attend", "-m", model, "-i", joined, "-t", joined, "--split-sentences"})),
                     "--split-sentences");
}
