// A request of `attn serve` as one table of fields: each row names a field,
// says whether it is required, its bounds, its default and what it means, and
// is bound to the member of the typed struct it is read into (whose C++ type
// gives the JSON type: int an integer, float a number, bool a boolean,
// std::vector<std::string> an array of strings). The same rows read a request
// (FieldReader: a one-line refusal naming the field) and write its JSON Schema
// (SchemaWriter; docs/serve.schema.json), so the two cannot disagree.
//
// A table is a function that hands each row and its member to a visitor:
//   template <class Visit> void fields(Request& r, Visit&& field) {
//     field({.name = "beam", .description = "…", .minimum = Setting{1}}, r.beam);
//   }
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::serve {

// A request the client must change: the HTTP status and the message.
struct Refusal {
  int status;
  std::string message;
};

// A bound or a default. Fixed, or set when the request comes: by a flag of the
// server ("--max-beam") or by a field read before it ("beam"); `value` is then
// what it is when the flag is not given, and the schema says it in words.
struct Setting {
  nlohmann::json value;
  std::string_view set_by = {};
};

struct Field {
  std::string_view name;
  std::string_view description;  // a noun phrase: what the value is (the refusals quote it)
  bool required = false;
  std::optional<Setting> minimum = {}, maximum = {};  // numbers: the value; arrays: how many items
  std::optional<Setting> fallback = {};               // the value when the request does not give the field
  // The first version's spelling, deprecated: one value X that stands for [X].
  std::string_view old_name = {};
};

// The body as a JSON object, or a Refusal (400): empty, not JSON, a NUL byte
// anywhere, a number too large for a double (named by its field), a key twice
// in one object, nesting deeper than any request needs, not an object.
nlohmann::json parse_body(const std::string& body);

// The names a table takes, in its order (old spellings after their field).
class FieldNames {
 public:
  template <class T>
  void operator()(const Field& f, const T&) {
    names.emplace_back(f.name);
    if (!f.old_name.empty()) names.emplace_back(f.old_name);
  }
  std::vector<std::string> names;
};

// Reads a request object row by row; throws Refusal at the first row it breaks.
class FieldReader {
 public:
  // flag: the value of a server flag a Setting names ("--max-beam").
  FieldReader(const nlohmann::json& request, std::function<nlohmann::json(std::string_view flag)> flag);
  void operator()(const Field& f, int& out);
  void operator()(const Field& f, float& out);
  void operator()(const Field& f, bool& out);
  void operator()(const Field& f, std::vector<std::string>& out);

 private:
  // The request's value of the row (under its name or its old one); null when absent.
  const nlohmann::json* given(const Field& f) const;
  double resolve(const Setting& s) const;
  nlohmann::json fallback(const Field& f) const;
  std::string integer_range(const Field& f) const;
  std::string number_range(const Field& f) const;
  std::string array_shape(const Field& f) const;

  const nlohmann::json& request_;
  std::function<nlohmann::json(std::string_view)> flag_;
  nlohmann::json read_ = nlohmann::json::object();  // the rows read so far: what a later Setting may name
};

// Writes a table as the JSON Schema of an object that takes its fields and no other.
class SchemaWriter {
 public:
  void operator()(const Field& f, const int&) { add(f, "integer"); }
  void operator()(const Field& f, const float&) { add(f, "number"); }
  void operator()(const Field& f, const bool&) { add(f, "boolean"); }
  void operator()(const Field& f, const std::vector<std::string>&) { add(f, "strings"); }
  nlohmann::ordered_json schema() const;

 private:
  void add(const Field& f, std::string_view type);
  nlohmann::ordered_json properties_ = nlohmann::ordered_json::object();
  std::vector<std::vector<std::string>> required_;  // each: the names of which one must be given
  std::vector<std::vector<std::string>> both_;      // each: a field and its old spelling, not both
};

// Reads `request` into `out` by its table: unknown fields, then every row in order.
template <class Request>
void read_fields(const nlohmann::json& request, Request& out,
                 const std::function<nlohmann::json(std::string_view)>& flag) {
  FieldNames known;
  fields(out, known);
  for (const auto& [key, value] : request.items()) {
    if (std::find(known.names.begin(), known.names.end(), key) != known.names.end()) continue;
    std::string list;
    for (const std::string& name : known.names) list += (list.empty() ? "" : ", ") + name;
    throw Refusal{400, "unknown field \"" + key + "\"; the fields are " + list};
  }
  FieldReader reader(request, flag);
  fields(out, reader);
}

template <class Request>
nlohmann::ordered_json schema_of() {
  Request r;
  SchemaWriter writer;
  fields(r, writer);
  return writer.schema();
}

}  // namespace attn::serve
