// The attention schema is built from the mechanism registry: it names exactly
// the registered map kinds, gives each mechanism's kinds its extras' schema,
// and docs/attention.schema.json is its text.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "attn/decode/attention_schema.h"
#include "attn/nn/mechanism.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::set<std::string> registered_kinds() {
  std::set<std::string> kinds;
  for (const attn::nn::Mechanism* m : attn::nn::mechanisms())
    for (const attn::nn::MapKind& k : m->map_kinds()) kinds.insert(std::string(k.kind));
  return kinds;
}

}  // namespace

TEST_CASE("attention schema: names exactly the registered mechanisms, each with its extras' schema",
          "[attend][schema]") {
  const json schema = json::parse(attn::decode::attention_schema().dump());
  const json& defs = schema.at("$defs");
  const json& kinds = defs.at("mechanism").at("enum");
  REQUIRE(kinds.get<std::set<std::string>>() == registered_kinds());
  REQUIRE(kinds.size() == registered_kinds().size());  // no kind twice

  // One rule per mechanism: a layer of its kinds has extras of its schema.
  const json& rules = defs.at("layer").at("allOf");
  REQUIRE(rules.size() == attn::nn::mechanisms().size());
  std::set<std::string> ruled;
  for (std::size_t k = 0; k < rules.size(); ++k) {
    const attn::nn::Mechanism& m = *attn::nn::mechanisms()[k];
    INFO(m.name());
    for (const json& kind : rules[k].at("if").at("properties").at("mechanism").at("enum"))
      ruled.insert(kind.get<std::string>());
    const std::string ref = rules[k].at("then").at("properties").at("extras").at("$ref");
    REQUIRE(ref == "#/$defs/" + std::string(m.name()) + "_extras");
    REQUIRE(defs.at(std::string(m.name()) + "_extras") == m.extras_schema());
  }
  REQUIRE(ruled == registered_kinds());
}

TEST_CASE("attention schema: docs/attention.schema.json is the schema built from the registry", "[attend][schema]") {
  const fs::path doc = fs::path(__FILE__).parent_path() / ".." / ".." / "docs" / "attention.schema.json";
  std::ifstream in(doc);
  REQUIRE(in);
  const nlohmann::ordered_json built = attn::decode::attention_schema();
  const bool same = nlohmann::ordered_json::parse(in) == built;
  if (!same) {
    const fs::path fresh = fs::temp_directory_path() / "attention.schema.json";
    std::ofstream(fresh) << built.dump(2) << "\n";
    FAIL_CHECK("docs/attention.schema.json is out of date: cp " << fresh.string() << " docs/attention.schema.json");
  }
  REQUIRE(same);
}
