// The request tables of attn serve (src/serve/requests.cpp) without a server:
// docs/serve.schema.json is what they write; the schema and the reader take
// and refuse the same requests, but for the bounds the server sets when a
// request comes; every refusal is one line naming what to change.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../decode/json_schema.h"

#include "attn/serve/requests.h"

using namespace attn::serve;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The refusal of a body by an endpoint's reader; none when it is taken.
std::optional<Refusal> refusal(const std::string& endpoint, const std::string& body, const Limits& limits = {}) {
  try {
    if (endpoint == "translate")
      read_translate(body, limits);
    else
      read_attend(body, limits);
  } catch (const Refusal& r) {
    return r;
  }
  return std::nullopt;
}

// Whether an endpoint's request definition in the schema takes a body.
bool schema_takes(const std::string& endpoint, const json& body) {
  static const json defs = json::parse(serve_schema().dump())["$defs"];
  const attn::test::SchemaValidator validator(json{{"$ref", "#/$defs/" + endpoint + "_request"}, {"$defs", defs}});
  return validator.validate(body).empty();
}

}  // namespace

TEST_CASE("serve schema: docs/serve.schema.json is the schema the request tables write", "[serve][schema]") {
  const fs::path doc = fs::path(__FILE__).parent_path() / ".." / ".." / "docs" / "serve.schema.json";
  std::ifstream in(doc);
  REQUIRE(in);
  const nlohmann::ordered_json built = serve_schema();
  const bool same = nlohmann::ordered_json::parse(in) == built;
  if (!same) {
    const fs::path fresh = fs::temp_directory_path() / "serve.schema.json";
    std::ofstream(fresh) << built.dump(2) << "\n";
    FAIL_CHECK("docs/serve.schema.json is out of date: cp " << fresh.string() << " docs/serve.schema.json");
  }
  REQUIRE(same);
}

TEST_CASE("serve requests: the schema takes what the reader takes and refuses what it refuses, each refusal "
          "naming its field",
          "[serve][schema]") {
  struct Case {
    std::string endpoint;
    json body;
    const char* refused_naming;  // nullptr: taken
  };
  const std::vector<Case> cases{
      {"translate", {{"sentences", {"a"}}}, nullptr},
      {"translate", {{"sentences", json::array()}}, nullptr},
      {"translate", {{"sentence", "a"}, {"model", "m"}}, nullptr},
      {"translate",
       {{"models", {"m"}},
        {"sentences", {"a", "b"}},
        {"beam", 5.0},
        {"nbest", 2.0},
        {"lenpen", 0.5},
        {"max_len_a", 0},
        {"max_len_b", 1000},
        {"split_sentences", true}},
       nullptr},
      {"translate", json::object(), "\"sentences\""},
      {"translate", {{"models", {"m"}}}, "\"sentences\""},
      {"translate", {{"sentences", "a"}}, "\"sentences\""},
      {"translate", {{"sentences", {"a", 7}}}, "\"sentences\"[1] is not a string"},
      {"translate", {{"sentence", {"a"}}}, "\"sentence\" must be a string"},
      {"translate", {{"sentences", {"a"}}, {"sentence", "a"}}, "not both"},
      {"translate", {{"models", {"m"}}, {"model", "m"}, {"sentences", {"a"}}}, "not both"},
      {"translate", {{"models", json::array()}, {"sentences", {"a"}}}, "\"models\""},
      {"translate", {{"models", {"m", "n"}}, {"sentences", {"a"}}}, "give an array of one"},
      {"translate", {{"models", "m"}, {"sentences", {"a"}}}, "\"models\""},
      {"translate", {{"model", {"m"}}, {"sentences", {"a"}}}, "\"model\""},
      {"translate", {{"sentences", {"a"}}, {"beam", 0}}, "\"beam\" is 0"},
      {"translate", {{"sentences", {"a"}}, {"beam", 5.5}}, "\"beam\" is 5.5"},
      {"translate", {{"sentences", {"a"}}, {"beam", "5"}}, "\"beam\" must be an integer"},
      {"translate", {{"sentences", {"a"}}, {"lenpen", -1}}, "\"lenpen\" is -1"},
      {"translate", {{"sentences", {"a"}}, {"lenpen", 10.5}}, "\"lenpen\""},
      {"translate", {{"sentences", {"a"}}, {"max_len_a", 101}}, "\"max_len_a\""},
      {"translate", {{"sentences", {"a"}}, {"max_len_b", -0.5}}, "\"max_len_b\""},
      {"translate", {{"sentences", {"a"}}, {"nbest", 0}}, "\"nbest\""},
      {"translate", {{"sentences", {"a"}}, {"split_sentences", "yes"}}, "\"split_sentences\" must be true or false"},
      {"translate", {{"sentences", {"a"}}, {"precision", 4}}, "unknown field \"precision\""},
      {"translate", {{"sentences", {"a"}}, {"beams", 4}}, "unknown field \"beams\""},
      {"attend", {{"sentences", {"a"}}}, nullptr},
      {"attend", {{"sentence", "a"}, {"models", {"a", "b", "c"}}, {"precision", 9}, {"beam", 1}}, nullptr},
      {"attend", {{"models", {"m"}}}, "\"sentences\""},
      {"attend", {{"sentences", {"a", "b"}}}, "an array of one"},
      {"attend", {{"sentences", json::array()}}, "an array of one"},
      {"attend", {{"sentences", {"a"}}, {"models", json::array()}}, "\"models\""},
      {"attend", {{"sentences", {"a"}}, {"precision", 0}}, "\"precision\" is 0"},
      {"attend", {{"sentences", {"a"}}, {"precision", 10}}, "\"precision\" is 10"},
      {"attend", {{"sentences", {"a"}}, {"nbest", 2}}, "unknown field \"nbest\""},
  };
  for (const Case& c : cases) {
    INFO(c.endpoint << " " << c.body.dump());
    const std::optional<Refusal> r = refusal(c.endpoint, c.body.dump());
    REQUIRE(schema_takes(c.endpoint, c.body) == !r);
    REQUIRE(r.has_value() == (c.refused_naming != nullptr));
    if (!r) continue;
    INFO(r->message);
    REQUIRE(r->status == 400);
    REQUIRE(r->message.find(c.refused_naming) != std::string::npos);
    REQUIRE(r->message.find('\n') == std::string::npos);
  }
}

TEST_CASE("serve requests: bounds the server sets when a request comes are checked, and the schema says them in "
          "words",
          "[serve][schema]") {
  Limits limits;
  limits.max_beam = 12;
  const json beam13{{"sentences", {"a"}}, {"beam", 13}};
  REQUIRE(refusal("translate", beam13.dump(), limits)->message == "\"beam\" is 13; give an integer between 1 and 12");
  REQUIRE(!refusal("translate", json{{"sentences", {"a"}}, {"beam", 12}}.dump(), limits));
  REQUIRE(refusal("translate", json{{"sentences", {"a"}}, {"beam", 3}, {"nbest", 4}}.dump())->message ==
          "\"nbest\" is 4; give an integer between 1 and 3");
  REQUIRE(schema_takes("translate", beam13));
  const json properties = json::parse(serve_schema().dump())["$defs"]["translate_request"]["properties"];
  REQUIRE(properties["beam"]["description"].get<std::string>().find("at most the server's --max-beam") !=
          std::string::npos);
  REQUIRE(properties["nbest"]["description"].get<std::string>().find("at most beam") != std::string::npos);
  REQUIRE(properties["beam"]["default"] == 5);
  REQUIRE(!properties["beam"].contains("maximum"));

  // The defaults: attn translate's search, and the server's --split-sentences.
  const TranslateRequest plain = read_translate(R"({"sentences": ["a"]})", limits);
  REQUIRE(plain.search.beam == 5);
  REQUIRE(plain.search.nbest == 1);
  REQUIRE(plain.search.lenpen == 1.0f);
  REQUIRE(!plain.split_sentences);
  limits.split_sentences = true;
  REQUIRE(read_translate(R"({"sentences": ["a"]})", limits).split_sentences);
  REQUIRE(!read_translate(R"({"sentences": ["a"], "split_sentences": false})", limits).split_sentences);
  const AttendRequest attend = read_attend(R"({"sentence": "a", "models": ["x", "y"], "precision": 6.0})", limits);
  REQUIRE(attend.sentences == std::vector<std::string>{"a"});
  REQUIRE(attend.models == std::vector<std::string>{"x", "y"});
  REQUIRE(attend.precision == 6);
}

TEST_CASE("serve requests: a body that is not one JSON object of fields is refused in one line", "[serve][schema]") {
  const auto message = [](const std::string& body) {
    const std::optional<Refusal> r = refusal("translate", body);
    REQUIRE(r);
    REQUIRE(r->status == 400);
    return r->message;
  };
  REQUIRE(message("").find("no body") != std::string::npos);
  REQUIRE(message("[1, 2]").find("not an object") != std::string::npos);
  REQUIRE(message(R"({"sentences": ["a"]} x)").find("not valid JSON") != std::string::npos);
  REQUIRE(message(std::string(R"({"sentences": ["a"]})") + '\0' + "x").find("NUL") != std::string::npos);
  REQUIRE(message("{\"sentences\": [\"r\xC3\x28\"]}").find("UTF-8") != std::string::npos);
  // A number too large for a double is named by its field, with the number.
  REQUIRE(message(R"({"sentences": ["a"], "lenpen": 1e400})") ==
          "\"lenpen\" holds a number out of range ('1e400'); see docs/serve.md for the field's range");
  REQUIRE(message(R"({"max_len_a": -1e400})").find("\"max_len_a\" holds a number out of range") == 0);
  // A field given twice would lose one of its values: refused.
  REQUIRE(message(R"({"sentences": ["a"], "beam": 1, "beam": 16})") ==
          "\"beam\" appears twice in one object; give each field once");
  // Nesting no request needs is refused before it is built.
  const std::string deep = R"({"sentences": )" + std::string(100000, '[');
  REQUIRE(message(deep).find("nests arrays and objects more than 8 deep") != std::string::npos);
  // Large integers are compared before they are converted.
  REQUIRE(message(R"({"sentences": ["a"], "beam": 18446744073709551615})") ==
          "\"beam\" is 18446744073709551615; give an integer between 1 and 16");
  REQUIRE(message(R"({"sentences": ["a"], "beam": -9223372036854775808})").find("\"beam\" is -") == 0);
  REQUIRE(message(R"({"sentences": ["a"], "beam": 99999999999999999999999})") ==
          "\"beam\" is 9.999999999999999e+22; give an integer between 1 and 16");
}

TEST_CASE("serve requests: docs/serve.md's tables name exactly the fields each endpoint's table takes",
          "[serve][schema]") {
  std::ifstream in(fs::path(__FILE__).parent_path() / ".." / ".." / "docs" / "serve.md");
  REQUIRE(in);
  // The `names` in the first cell of each row of the table under an endpoint's heading.
  std::map<std::string, std::set<std::string>> documented;
  std::string endpoint, line;
  while (std::getline(in, line)) {
    if (line.starts_with("### "))
      endpoint = line.find("/v1/translate") != std::string::npos ? "translate"
                 : line.find("/v1/attend") != std::string::npos  ? "attend"
                                                                 : "";
    if (endpoint.empty() || !line.starts_with("| `")) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', cell.find('`', at + 1) + 1))
      documented[endpoint].insert(cell.substr(at + 1, cell.find('`', at + 1) - at - 1));
  }
  const json defs = json::parse(serve_schema().dump())["$defs"];
  for (const std::string e : {"translate", "attend"}) {
    INFO(e);
    std::set<std::string> taken;
    for (const auto& [name, definition] : defs[e + "_request"]["properties"].items()) taken.insert(name);
    REQUIRE(documented[e] == taken);
  }
}
