// A small JSON Schema validator for the tests: the subset of draft 2020-12
// that docs/attention.schema.json and docs/serve.schema.json use. A keyword it does not know is an
// error, so the schema cannot use more than what is checked here.
#pragma once
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::test {

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json schema) : root_(std::move(schema)) {}

  static SchemaValidator from_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read the schema " + path.string());
    return SchemaValidator(nlohmann::json::parse(in));
  }

  // The errors of doc against the schema, each "<JSON pointer>: what"; empty when valid.
  std::vector<std::string> validate(const nlohmann::json& doc) const {
    std::vector<std::string> errors;
    check(root_, doc, "", errors);
    return errors;
  }

 private:
  using json = nlohmann::json;

  static bool has_type(const json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    if (type == "number") return v.is_number();
    if (type == "integer")
      return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    throw std::runtime_error("schema: unknown type " + type);
  }

  const json& resolve(const std::string& ref) const {
    if (ref.rfind("#/", 0) != 0) throw std::runtime_error("schema: only local $ref are supported: " + ref);
    return root_.at(json::json_pointer(ref.substr(1)));
  }

  bool valid(const json& schema, const json& v) const {
    std::vector<std::string> errors;
    check(schema, v, "", errors);
    return errors.empty();
  }

  void check(const json& schema, const json& v, const std::string& at, std::vector<std::string>& errors) const {
    static const std::set<std::string> annotations{"$schema", "$id",      "title",   "description",
                                                   "$defs",   "$comment", "default", "deprecated"};
    auto fail = [&](const std::string& what) {
      if (errors.size() < 50) errors.push_back((at.empty() ? "/" : at) + ": " + what);
    };
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail("no value is allowed here");
      return;
    }
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      const std::string& key = it.key();
      const json& s = it.value();
      if (annotations.count(key) || key == "then") continue;  // then: with if
      if (key == "$ref") {
        check(resolve(s.get<std::string>()), v, at, errors);
      } else if (key == "type") {
        bool ok = false;
        if (s.is_string())
          ok = has_type(v, s.get<std::string>());
        else
          for (const json& t : s) ok = ok || has_type(v, t.get<std::string>());
        if (!ok) fail("is not of type " + s.dump());
      } else if (key == "enum") {
        bool ok = false;
        for (const json& e : s) ok = ok || e == v;
        if (!ok) fail(v.dump() + " is not one of " + s.dump());
      } else if (key == "const") {
        if (s != v) fail(v.dump() + " is not " + s.dump());
      } else if (key == "properties") {
        if (!v.is_object()) continue;
        for (auto p = s.begin(); p != s.end(); ++p)
          if (v.contains(p.key())) check(p.value(), v.at(p.key()), at + "/" + p.key(), errors);
      } else if (key == "required") {
        if (!v.is_object()) continue;
        for (const json& name : s)
          if (!v.contains(name.get<std::string>())) fail("misses " + name.get<std::string>());
      } else if (key == "additionalProperties") {
        if (!v.is_object()) continue;
        const json known = schema.contains("properties") ? schema["properties"] : json::object();
        for (auto p = v.begin(); p != v.end(); ++p)
          if (!known.contains(p.key())) {
            if (s.is_boolean() && !s.get<bool>())
              fail("has an unexpected property " + p.key());
            else if (!s.is_boolean())
              check(s, p.value(), at + "/" + p.key(), errors);
          }
      } else if (key == "dependentRequired") {
        if (!v.is_object()) continue;
        for (auto d = s.begin(); d != s.end(); ++d)
          if (v.contains(d.key()))
            for (const json& name : d.value())
              if (!v.contains(name.get<std::string>())) fail(d.key() + " needs " + name.get<std::string>());
      } else if (key == "items") {
        if (!v.is_array()) continue;
        for (std::size_t i = 0; i < v.size(); ++i) check(s, v[i], at + "/" + std::to_string(i), errors);
      } else if (key == "minItems") {
        if (v.is_array() && v.size() < s.get<std::size_t>()) fail("has fewer than " + s.dump() + " items");
      } else if (key == "maxItems") {
        if (v.is_array() && v.size() > s.get<std::size_t>()) fail("has more than " + s.dump() + " items");
      } else if (key == "minimum") {
        if (v.is_number() && v.get<double>() < s.get<double>()) fail(v.dump() + " is below " + s.dump());
      } else if (key == "maximum") {
        if (v.is_number() && v.get<double>() > s.get<double>()) fail(v.dump() + " is above " + s.dump());
      } else if (key == "allOf") {
        for (const json& sub : s) check(sub, v, at, errors);
      } else if (key == "anyOf") {
        bool ok = false;
        for (const json& sub : s) ok = ok || valid(sub, v);
        if (!ok) fail("matches none of anyOf");
      } else if (key == "not") {
        if (valid(s, v)) fail("matches what \"not\" excludes: " + s.dump());
      } else if (key == "if") {
        if (valid(s, v) && schema.contains("then")) check(schema["then"], v, at, errors);
      } else {
        throw std::runtime_error("schema: keyword '" + key + "' is not supported by this validator");
      }
    }
  }

  json root_;
};

}  // namespace attn::test
