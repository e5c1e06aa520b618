// The precision flags: train --precision bf16 trains and its
// checkpoint resumes in FP32 with the change logged; translate and attend
// take --compute-type bf16 and int8; other values are refused.
#include <string>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

TEST_CASE("train --precision bf16 trains and resumes in fp32; translate and attend take --compute-type bf16|int8",
          "[cli][train][bf16][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 100, 5);
  write_tiny_corpus(dir.path(), "valid", 10, 6);
  RunResult r =
      run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "3", "--precision", "bf16"})));
  INFO(r.err);
  REQUIRE(r.status == 0);
  r = run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "5", "--precision", "fp32"})));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string log = slurp(dir.path() / "run" / "log.jsonl");
  REQUIRE(log.find(R"("--precision":"bf16")") != std::string::npos);
  REQUIRE(log.find("--precision bf16 → fp32") != std::string::npos);

  const std::string model = (dir.path() / "run" / "last.attn").string();
  dir.write("in.txt", "red cat\nblue dog sits\n");
  for (const char* type : {"fp32", "bf16", "int8"}) {
    r = run_attn(shell_words({"translate", "-m", model, "-i", (dir.path() / "in.txt").string(), "--compute-type",
                              type}));
    INFO(type << ": " << r.err);
    REQUIRE(r.status == 0);
    REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 2);
    r = run_attn(shell_words({"attend", "-m", model, "-i", (dir.path() / "in.txt").string(), "--compute-type", type}));
    REQUIRE(r.status == 0);
  }
  require_user_error(run_attn(shell_words(tiny_train_args(dir.path(), "other", {"--precision", "fp16"}))),
                     "--precision");
  require_user_error(run_attn(shell_words({"translate", "-m", model, "--compute-type", "int4"}), "red\n"),
                     "--compute-type");
}
