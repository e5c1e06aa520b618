// The JSON Schema of `attn attend`'s documents (docs/attention-json.md);
// docs/attention.schema.json is its text, and a test keeps the two equal.
// The fixed part is src/decode/attention_schema_base.json; from the mechanism
// registry (nn/mechanism.h) come the map kinds a layer's "mechanism" may be
// ($defs/mechanism) and, per mechanism, the schema of its extras
// ($defs/<name>_extras, the module's extras.schema.json) that a layer of its
// kinds must meet. A new mechanism is in the schema without an edit here.
#pragma once
#include <nlohmann/json.hpp>

namespace attn::decode {

// Keys in the base file's order, so that the schema file reads as it was written.
nlohmann::ordered_json attention_schema();

}  // namespace attn::decode
