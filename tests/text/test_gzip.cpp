// gzip-compressed text: read as its content wherever attn reads
// text, detected by the magic bytes; damaged data is an error naming the file.
#include <zlib.h>

#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/error.h"
#include "attn/text/gzip.h"
#include "attn/text/text_file.h"

using namespace attn;

namespace {

// `text` as one gzip member (zlib's deflate with a gzip header).
std::string gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

TEST_CASE("gzip: compressed text reads as its content, by magic bytes, members concatenated", "[text][gzip]") {
  test::ScratchDir dir;
  const std::string text = "ein Hund läuft\r\nzwei Katzen\n\nlast line without newline";
  const std::vector<std::string> want{"ein Hund läuft", "zwei Katzen", "", "last line without newline"};
  REQUIRE(text::read_lines(dir.write("plain.txt", text)) == want);
  REQUIRE(text::read_lines(dir.write("packed.gz", gzip(text))) == want);
  REQUIRE(text::read_lines(dir.write("no-suffix", gzip(text))) == want);  // the name does not matter
  // cat a.gz b.gz is one gzip stream of both, as gzip -d reads it.
  REQUIRE(text::read_lines(dir.write("two.gz", gzip("a\nb\n") + gzip("c\n"))) ==
          std::vector<std::string>{"a", "b", "c"});
  REQUIRE(text::decompress_if_gzip("plain", "x") == "plain");
  REQUIRE(text::decompress_if_gzip(gzip(""), "x").empty());
}

TEST_CASE("gzip: damaged data and bad text inside are errors naming the file (and the line)", "[text][gzip]") {
  test::ScratchDir dir;
  const std::string packed = gzip("good line\nanother good line\n");
  const std::string cut = dir.write("cut.gz", packed.substr(0, packed.size() / 2));
  REQUIRE_THROWS_WITH(text::read_lines(cut), Catch::Contains("cut.gz: damaged gzip data"));
  std::string flipped = packed;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
  REQUIRE_THROWS_WITH(text::read_lines(dir.write("flipped.gz", flipped)),
                      Catch::Contains("flipped.gz: damaged gzip data"));
  // Line numbers count the decompressed lines.
  REQUIRE_THROWS_WITH(text::read_lines(dir.write("latin1.gz", gzip("fine\nna\xEFve\n"))),
                      Catch::Contains("latin1.gz:2: invalid UTF-8"));
}
