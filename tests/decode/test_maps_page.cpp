// attend's HTML page (decode/maps_page.h): self-contained (nothing loaded from
// outside), every sentence one data block that parses back to its JSON, and
// text that could close the block or break the markup escaped.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attn/decode/maps.h"
#include "attn/decode/maps_page.h"
#include "maps_fixtures.h"

using namespace attn;
using attn::test::attend_lines;
using attn::test::randomize;
using attn::test::small_config;
using nlohmann::json;

TEST_CASE("attend: the page is self-contained and embeds every sentence safely", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("convsan2d"));
  randomize(m, 81);
  const std::vector<std::string> lines{"a </script> b", "x & \"y\"", ""};
  const auto sentences = attend_lines(m, bpe, lines, nullptr, {}, {});
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  {
    decode::MapsPageWriter page(f, decode::maps_header(m, "m", false, {}, {}));
    for (std::size_t i = 0; i < sentences.size(); ++i) page.add(static_cast<std::int64_t>(i), lines[i], sentences[i]);
    page.finish();
  }
  std::fclose(f);
  const std::string html(buffer, size);
  std::free(buffer);
  REQUIRE(html.rfind("<!doctype html>", 0) == 0);
  for (const char* outside : {"http://", "https://", "<script src", "<link", "@import", "url("}) {
    INFO(outside);
    REQUIRE(html.find(outside) == std::string::npos);
  }
  // Each sentence is one data block whose text parses back to the sentence's JSON.
  std::size_t at = 0;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    at = html.find("class=\"attn-sentence\"", at);
    REQUIRE(at != std::string::npos);
    const std::size_t open = html.find('>', at) + 1, close = html.find("</script>", open);
    const std::string block = html.substr(open, close - open);
    REQUIRE(block.find('<') == std::string::npos);  // "</s>", "</script>" inside strings are escaped
    REQUIRE(json::parse(block) == json::parse(sentences[i]));
    at = close;
  }
  REQUIRE(html.find("class=\"attn-sentence\"", at) == std::string::npos);
  REQUIRE(html.find("data-preview=\"x &amp; &quot;y&quot;\"") != std::string::npos);
  REQUIRE(html.rfind("</html>\n") == html.size() - 8);
}
