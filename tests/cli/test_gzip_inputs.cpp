// gzip-compressed inputs on the command line: train, translate,
// attend and score read `.gz` files as their content; a damaged one is exit 2
// naming it.
#include <zlib.h>

#include <string>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"

using namespace attn;
using namespace attn::test;

namespace {

// Compresses `file` to `file`.gz with zlib's gzip writer.
std::string gzip_file(const std::filesystem::path& file) {
  const std::string content = slurp(file), packed = file.string() + ".gz";
  gzFile out = gzopen(packed.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, content.data(), static_cast<unsigned>(content.size())) == static_cast<int>(content.size()));
  REQUIRE(gzclose(out) == Z_OK);
  return packed;
}

}  // namespace

TEST_CASE("gzip inputs: train, translate, attend and score read .gz files as their content", "[cli][gzip][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 8, 6);
  for (const char* file : {"train.src", "train.tgt", "valid.src", "valid.tgt"}) gzip_file(dir.path() / file);
  std::vector<std::string> args = tiny_train_args(dir.path(), "run", {"--max-updates", "2"});
  for (std::string& a : args)
    for (const char* file : {"train.src", "train.tgt", "valid.src", "valid.tgt"})
      if (a == (dir.path() / file).string()) a += ".gz";
  RunResult r = run_attn(shell_words(args));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string model = (dir.path() / "run" / "last.attn").string();

  const std::string plain = (dir.path() / "valid.src").string(), packed = plain + ".gz";
  const RunResult from_plain = run_attn(shell_words({"translate", "-m", model, "-i", plain}));
  const RunResult from_packed = run_attn(shell_words({"translate", "-m", model, "-i", packed}));
  REQUIRE(from_plain.status == 0);
  REQUIRE(from_packed.status == 0);
  REQUIRE(from_packed.out == from_plain.out);
  const RunResult attend = run_attn(shell_words({"attend", "-m", model, "-i", packed}));
  REQUIRE(attend.status == 0);
  REQUIRE(attend.out == run_attn(shell_words({"attend", "-m", model, "-i", plain})).out);

  dir.write("hyp.txt", from_plain.out);
  const std::string hyp_gz = gzip_file(dir.path() / "hyp.txt");
  const std::string ref = (dir.path() / "valid.tgt").string();
  const RunResult score_plain = run_attn(shell_words({"score", "--ref", ref, "-i", (dir.path() / "hyp.txt").string()}));
  const RunResult score_packed = run_attn(shell_words({"score", "--ref", ref + ".gz", "-i", hyp_gz}));
  REQUIRE(score_plain.status == 0);
  REQUIRE(score_packed.out == score_plain.out);

  const std::string content = slurp(packed);
  dir.write("cut.gz", content.substr(0, content.size() - 12));
  require_user_error(run_attn(shell_words({"translate", "-m", model, "-i", (dir.path() / "cut.gz").string()})),
                     "cut.gz: damaged gzip data");
}

TEST_CASE("gzip inputs: --train PREFIX reads PREFIX.<lang>.gz when only the compressed file exists",
          "[cli][gzip][e2e]") {
  ScratchDir dir;
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 8, 6);
  for (const char* file : {"train.src", "train.tgt"}) {
    gzip_file(dir.path() / file);
    std::filesystem::remove(dir.path() / file);
  }
  std::vector<std::string> args = tiny_train_args(dir.path(), "run", {"--max-updates", "2"});
  args.erase(args.begin() + 1, args.begin() + 5);  // --train-src FILE --train-tgt FILE
  args.insert(args.begin() + 1, {"--train", (dir.path() / "train").string()});
  const RunResult r = run_attn(shell_words(args));
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(std::filesystem::exists(dir.path() / "run" / "last.attn"));
}
