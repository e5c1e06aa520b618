#include "attn/decode/attention_schema.h"

#include "attn/core/embed.h"
#include "attn/nn/mechanism.h"

namespace attn::decode {

namespace {

ATTN_EMBED(attn_attention_schema_base, "src/decode/attention_schema_base.json");

}  // namespace

nlohmann::ordered_json attention_schema() {
  using json = nlohmann::ordered_json;
  json schema = json::parse(ATTN_EMBEDDED(attn_attention_schema_base));
  json kinds = json::array(), rules = json::array();
  for (const nn::Mechanism* m : nn::mechanisms()) {
    json its_kinds = json::array();
    for (const nn::MapKind& k : m->map_kinds()) its_kinds.push_back(std::string(k.kind));
    const std::string extras = std::string(m->name()) + "_extras";
    schema["$defs"][extras] = json::parse(m->extras_schema().dump());
    rules.push_back({{"if", {{"properties", {{"mechanism", {{"enum", its_kinds}}}}}}},
                     {"then", {{"properties", {{"extras", {{"$ref", "#/$defs/" + extras}}}}}}}});
    for (json& k : its_kinds) kinds.push_back(std::move(k));
  }
  schema["$defs"]["mechanism"]["enum"] = std::move(kinds);
  schema["$defs"]["layer"]["allOf"] = std::move(rules);
  return schema;
}

}  // namespace attn::decode
