// Reading a parallel corpus the way a user expects of real files: a BOM and
// CRLF line ends are dropped, pairs with an empty side and pairs longer than
// --max-len are skipped and counted (the line numbers of the rest kept), and a
// corpus with nothing usable left is one clear error.
#include <filesystem>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "attn/text/bpe.h"
#include "attn/train/corpus.h"

using namespace attn;

TEST_CASE("corpus: BOM, CRLF, empty lines and over-long lines", "[train][io][e2e]") {
  test::ScratchDir dir;
  std::string long_line;
  for (int i = 0; i < 40; ++i) long_line += "red dog ";
  dir.write("c.src", "\xEF\xBB\xBFred cat\r\nblue dog\n\nsees\n" + long_line + "\ntwo\n");
  dir.write("c.tgt", "Cat Red\r\nDog Blue\r\nTwo\r\n\r\nX\r\nTwo");  // no final line end
  const train::ParallelText text = train::read_parallel(dir.path() / "c.src", dir.path() / "c.tgt", "training");
  REQUIRE(text.src.size() == 6);
  REQUIRE(text.tgt.size() == 6);
  REQUIRE(text.src[0] == "red cat");  // the BOM is not part of the first word
  REQUIRE(text.tgt[0] == "Cat Red");  // nor a CR part of the last
  REQUIRE(text.src[2].empty());
  REQUIRE(text.tgt[5] == "Two");

  text::Bpe::Options options;
  options.vocab_size = 300;
  const text::Bpe bpe = text::Bpe::learn({"red cat", "blue dog", "Cat Red", "Dog Blue", "sees", "Two"}, options);
  const train::EncodedCorpus corpus = train::encode_corpus(text, bpe, 20);
  REQUIRE(corpus.skipped_empty == 2);  // line 3 (source empty) and line 4 (target empty)
  REQUIRE(corpus.skipped_long == 1);   // line 5
  REQUIRE(corpus.line == std::vector<std::int64_t>{0, 1, 5});
  REQUIRE(train::encode_corpus(text, bpe, 0).skipped_long == 0);  // no limit

  // attn train: nothing usable is one line and exit status 2.
  dir.write("v.src", "red cat\n");
  dir.write("v.tgt", "Cat Red\n");
  const std::string files = " --train-src " + (dir.path() / "c.src").string() + " --train-tgt " +
                            (dir.path() / "c.tgt").string() + " --valid-src " + (dir.path() / "v.src").string() +
                            " --valid-tgt " + (dir.path() / "v.tgt").string() + " --save-dir " +
                            (dir.path() / "run").string() + " --vocab-size 300 --quiet";
  test::require_user_error(test::run_attn("train" + files + " --max-len 1"),
                           "no usable sentence pairs (all empty or longer than --max-len)");
}
