// Output formats (sacreBLEU's text line and JSON layout) and reading
// segments from text.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/core/error.h"
#include "attn/eval/report.h"
#include "attn/eval/segments.h"

using namespace attn::eval;

namespace {

const std::vector<MetricResult> kResults = {
    {"BLEU", 48.530827009929865, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-0.1.0",
     "82.4/59.5/43.5/32.2 (BP = 1.000 ratio = 1.000 hyp_len = 18 ref_len = 18)"},
    {"chrF2", 59.73, "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0", ""},
};

}  // namespace

TEST_CASE("text output is sacreBLEU's line, aligned on '='", "[eval][report]") {
  const std::string text = format_text(kResults, 2);
  // The BLEU name and signature are 2 characters shorter than chrF's.
  CHECK(text == "  BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-0.1.0 = 48.53 82.4/59.5/43.5/32.2 "
                "(BP = 1.000 ratio = 1.000 hyp_len = 18 ref_len = 18)\n"
                "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0 = 59.73\n");
  CHECK(format_text(std::vector<MetricResult>{kResults[1]}, 1) ==
        "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0 = 59.7\n");
  CHECK(format_scores_only(kResults, 1) == "48.5\n59.7\n");
}

TEST_CASE("JSON output is a list of sacreBLEU-shaped objects with full-precision scores", "[eval][report]") {
  const std::string text = format_json(kResults);
  CHECK(text.rfind("[\n{\n \"name\": \"BLEU\",\n \"score\": 48.530827009929865,\n", 0) == 0);
  const auto json = nlohmann::ordered_json::parse(text);
  REQUIRE(json.is_array());
  REQUIRE(json.size() == 2);
  CHECK(json[0]["score"].get<double>() == kResults[0].score);
  CHECK(json[0]["verbose_score"] == kResults[0].verbose);
  CHECK(json[0]["tok"] == "13a");
  CHECK(json[0]["nrefs"] == "2");
  CHECK(json[0]["version"] == "attn-0.1.0");
  CHECK_FALSE(json[1].contains("verbose_score"));
  CHECK(json[1]["nc"] == "6");
  std::vector<std::string> keys;
  for (const auto& item : json[0].items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"name", "score", "signature", "verbose_score", "nrefs", "case", "eff", "tok",
                                         "smooth", "version"});
}

TEST_CASE("segments are lines with trailing whitespace stripped, as sacreBLEU reads them", "[eval][segments]") {
  CHECK(split_segments("a\nb \r\n\nc", "x") == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(split_segments("a\n", "x") == std::vector<std::string>{"a"});
  CHECK(split_segments("", "x").empty());
  CHECK(split_segments("\n", "x") == std::vector<std::string>{""});
  CHECK(split_segments("\xef\xbb\xbf"
                       "a\tb\u00a0\n",
                       "x") == std::vector<std::string>{"\xef\xbb\xbf"
                                                        "a\tb"});
  CHECK(split_segments("in\rside", "x") == std::vector<std::string>{"in\rside"});
}

TEST_CASE("invalid UTF-8 is refused with its origin and line", "[eval][segments]") {
  try {
    split_segments("fine\nbad \xff byte\n", "'hyp.txt'");
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(std::string(e.what()).find("'hyp.txt' line 2 is not valid UTF-8 (byte 5") != std::string::npos);
  }
  CHECK_THROWS_AS(read_segments("/nonexistent/attn-score-file"), attn::Error);
}
