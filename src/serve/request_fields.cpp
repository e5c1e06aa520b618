#include "attn/serve/request_fields.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace attn::serve {

namespace {

using json = nlohmann::json;

// No request needs more than an object of arrays; deeper nesting is refused
// before it is built (a megabyte of "[" would otherwise be a million arrays).
constexpr std::size_t kMaxDepth = 8;

// The DOM of a body, built through nlohmann's public SAX interface, refusing
// what its own parser would take silently (a key twice: one value lost) or
// expensively (deep nesting), and remembering the last key it met, so that a
// number too large for a double (1e400) is refused naming its field.
class BodyBuilder final : public nlohmann::json_sax<json> {
 public:
  explicit BodyBuilder(json& root) : root_(root) {}
  std::optional<Refusal> refusal;

  bool null() override { return put(nullptr); }
  bool boolean(bool b) override { return put(b); }
  bool number_integer(number_integer_t x) override { return put(x); }
  bool number_unsigned(number_unsigned_t x) override { return put(x); }
  bool number_float(number_float_t x, const string_t&) override { return put(x); }
  bool string(string_t& s) override { return put(std::move(s)); }
  bool binary(binary_t&) override { return false; }  // JSON text has none
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (open_.back()->contains(k)) {
      refusal = Refusal{400, "\"" + k + "\" appears twice in one object; give each field once"};
      return false;
    }
    key_ = std::move(k);
    last_key_ = key_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    if (e.id == 406) {  // out_of_range.406: a number overflows a double
      const std::string what = e.what();
      const std::size_t quote = what.find('\'');  // the number, as nlohmann quotes it
      const std::string number = quote == std::string::npos ? "" : " (" + what.substr(quote) + ")";
      refusal = Refusal{400, (last_key_.empty() ? std::string("the body") : "\"" + last_key_ + "\"") +
                                 " holds a number out of range" + number + "; see docs/serve.md for the field's range"};
    } else {
      // nlohmann's message names the byte and what it expected (invalid UTF-8 included).
      refusal = Refusal{400, std::string("the body is not valid JSON: ") + e.what()};
    }
    return false;
  }

 private:
  // Places a value where the parser is: the root, the open array's end, or the open object's key.
  json& place(json value) {
    if (open_.empty()) return root_ = std::move(value);
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return parent.back();
    }
    return parent[key_] = std::move(value);
  }
  bool put(json value) {
    place(std::move(value));
    return true;
  }
  // An open container's address stays valid: only the innermost open one grows.
  bool open(json empty) {
    if (open_.size() >= kMaxDepth) {
      refusal = Refusal{400, "the body nests arrays and objects more than " + std::to_string(kMaxDepth) +
                                 " deep; a request is an object of values and arrays of strings (docs/serve.md)"};
      return false;
    }
    open_.push_back(&place(std::move(empty)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  std::vector<json*> open_;
  std::string key_, last_key_;
};

std::string in_quotes(std::string_view name) { return "\"" + std::string(name) + "\""; }

// A bound as a person writes it: 10, not 10.0.
std::string shown(double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  return json(x).dump();
}

// "between 1 and 12", "of at least 1", "" (no bound).
std::string bounds_phrase(std::optional<double> lo, std::optional<double> hi) {
  if (lo && hi) return " between " + shown(*lo) + " and " + shown(*hi);
  if (lo) return " of at least " + shown(*lo);
  if (hi) return " of at most " + shown(*hi);
  return "";
}

// A schema number: an integer when it is one, so the file reads 10, not 10.0.
nlohmann::ordered_json schema_number(const json& v) {
  const double x = v.get<double>();
  if (x == std::floor(x) && std::fabs(x) < 1e15) return static_cast<std::int64_t>(x);
  return x;
}

}  // namespace

json parse_body(const std::string& body) {
  if (body.empty()) throw Refusal{400, "the request has no body; send a JSON object (docs/serve.md)"};
  // nlohmann's lexer takes a NUL byte for the end of the input, so a valid
  // value, a NUL and anything after it would pass. JSON allows a raw NUL
  // nowhere (in a string it is written \u0000): any is refused here.
  if (const std::size_t nul = body.find('\0'); nul != std::string::npos)
    throw Refusal{400, "the body is not valid JSON: byte " + std::to_string(nul + 1) +
                           " is a NUL (0x00), which JSON allows nowhere; write it \\u0000 inside a string"};
  json request;
  BodyBuilder builder(request);
  if (!json::sax_parse(body, &builder) || builder.refusal)
    throw builder.refusal.value_or(Refusal{400, "the body is not valid JSON"});
  if (!request.is_object()) throw Refusal{400, "the body is JSON but not an object; send {\"…\": …} (docs/serve.md)"};
  return request;
}

// ---------------------------------------------------------------- reading

FieldReader::FieldReader(const json& request, std::function<json(std::string_view)> flag)
    : request_(request), flag_(std::move(flag)) {}

const json* FieldReader::given(const Field& f) const {
  const auto here = request_.find(f.name);
  if (here != request_.end() && !f.old_name.empty() && request_.contains(f.old_name))
    throw Refusal{400, "give " + in_quotes(f.name) + " (or the deprecated " + in_quotes(f.old_name) + "), not both"};
  return here == request_.end() ? nullptr : &*here;
}

double FieldReader::resolve(const Setting& s) const {
  if (s.set_by.empty()) return s.value.get<double>();
  if (s.set_by.starts_with("--")) return flag_(s.set_by).get<double>();
  return read_.at(std::string(s.set_by)).get<double>();  // a row read before this one
}

json FieldReader::fallback(const Field& f) const {
  if (f.required) throw Refusal{400, "the request needs " + in_quotes(f.name) + ": " + std::string(f.description)};
  if (!f.fallback) throw std::logic_error("serve: the optional field \"" + std::string(f.name) + "\" has no default");
  return f.fallback->set_by.empty() ? f.fallback->value : flag_(f.fallback->set_by);
}

std::string FieldReader::integer_range(const Field& f) const {
  return "an integer" + bounds_phrase(f.minimum ? std::optional(resolve(*f.minimum)) : std::nullopt,
                                      f.maximum ? std::optional(resolve(*f.maximum)) : std::nullopt);
}

std::string FieldReader::number_range(const Field& f) const {
  return "a number" + bounds_phrase(f.minimum ? std::optional(resolve(*f.minimum)) : std::nullopt,
                                    f.maximum ? std::optional(resolve(*f.maximum)) : std::nullopt);
}

std::string FieldReader::array_shape(const Field& f) const {
  const double lo = f.minimum ? resolve(*f.minimum) : 0;
  const std::optional<double> hi = f.maximum ? std::optional(resolve(*f.maximum)) : std::nullopt;
  if (hi && lo == *hi) return lo == 1 ? "an array of one string" : "an array of " + shown(lo) + " strings";
  if (hi) return "an array of " + shown(lo) + " to " + shown(*hi) + " strings";
  return lo == 1  ? "a non-empty array of strings"
         : lo > 1 ? "an array of at least " + shown(lo) + " strings"
                  : "an array of strings";
}

// An integer as JSON Schema defines one: any number with no fractional part
// (5 and 5.0 alike), checked against the range before it is converted.
void FieldReader::operator()(const Field& f, int& out) {
  const json* v = given(f);
  if (!v) {
    out = fallback(f).get<int>();
  } else {
    const std::string range = integer_range(f);
    if (!v->is_number()) throw Refusal{400, in_quotes(f.name) + " must be " + range};
    const Refusal out_of_range{400, in_quotes(f.name) + " is " + v->dump() + "; give " + range};
    // long double holds every 64-bit integer exactly.
    long double x = 0;
    if (v->is_number_unsigned()) {
      x = static_cast<long double>(v->get<std::uint64_t>());
    } else if (v->is_number_integer()) {
      x = static_cast<long double>(v->get<std::int64_t>());
    } else {
      const double d = v->get<double>();
      if (d != std::floor(d)) throw out_of_range;
      x = d;
    }
    const long double lo = f.minimum ? resolve(*f.minimum) : std::numeric_limits<int>::min();
    const long double hi = f.maximum ? resolve(*f.maximum) : std::numeric_limits<int>::max();
    if (!(x >= lo && x <= hi && x >= std::numeric_limits<int>::min() && x <= std::numeric_limits<int>::max()))
      throw out_of_range;
    out = static_cast<int>(x);
  }
  read_[std::string(f.name)] = out;
}

void FieldReader::operator()(const Field& f, float& out) {
  const json* v = given(f);
  if (!v) {
    out = fallback(f).get<float>();
  } else {
    const std::string range = number_range(f);
    if (!v->is_number()) throw Refusal{400, in_quotes(f.name) + " must be " + range};
    const double x = v->get<double>();
    if ((f.minimum && !(x >= resolve(*f.minimum))) || (f.maximum && !(x <= resolve(*f.maximum))))
      throw Refusal{400, in_quotes(f.name) + " is " + v->dump() + "; give " + range};
    out = static_cast<float>(x);
  }
  read_[std::string(f.name)] = out;
}

void FieldReader::operator()(const Field& f, bool& out) {
  const json* v = given(f);
  if (!v) {
    out = fallback(f).get<bool>();
  } else {
    if (!v->is_boolean()) throw Refusal{400, in_quotes(f.name) + " must be true or false"};
    out = v->get<bool>();
  }
  read_[std::string(f.name)] = out;
}

void FieldReader::operator()(const Field& f, std::vector<std::string>& out) {
  const json* v = given(f);
  std::string name(f.name);
  json old_spelling;  // [X] for the old spelling's X
  if (v) {
    if (!v->is_array()) throw Refusal{400, in_quotes(name) + " must be " + array_shape(f)};
  } else if (!f.old_name.empty() && request_.contains(f.old_name)) {
    name = f.old_name;
    if (!request_[name].is_string()) throw Refusal{400, in_quotes(name) + " must be a string"};
    old_spelling = json::array({request_[name]});
    v = &old_spelling;
  } else {
    if (f.required)
      throw Refusal{400, "the request needs " + in_quotes(f.name) + ": " + array_shape(f) + ", " +
                             std::string(f.description)};
    out.clear();  // absent: the description says what that means
    return;
  }
  const json& items = *v;
  const double n = static_cast<double>(items.size());
  if ((f.minimum && n < resolve(*f.minimum)) || (f.maximum && n > resolve(*f.maximum)))
    throw Refusal{400, in_quotes(name) + " holds " + std::to_string(items.size()) + " item" +
                           (items.size() == 1 ? "" : "s") + "; give " + array_shape(f) + ", " +
                           std::string(f.description)};
  out.clear();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) throw Refusal{400, in_quotes(name) + "[" + std::to_string(i) + "] is not a string"};
    out.push_back(items[i].get<std::string>());
  }
}

// ---------------------------------------------------------------- the schema

void SchemaWriter::add(const Field& f, std::string_view type) {
  const bool array = type == "strings";
  if (!f.old_name.empty() && !array)
    throw std::logic_error("serve: an old spelling stands for an array of one; \"" + std::string(f.name) +
                           "\" is not an array");
  nlohmann::ordered_json p = nlohmann::ordered_json::object();
  std::string description(f.description);
  if (array) {
    p["type"] = "array";
    p["items"] = {{"type", "string"}};
  } else {
    p["type"] = type;
  }
  // A fixed bound is a keyword; one set when the request comes is said in words.
  const auto bound = [&](const std::optional<Setting>& s, const char* keyword, const char* words) {
    if (!s) return;
    if (s->set_by.empty())
      p[keyword] = schema_number(s->value);
    else
      description += std::string("; ") + words + (s->set_by.starts_with("--") ? " the server's " : " ") +
                     std::string(s->set_by);
  };
  bound(f.minimum, array ? "minItems" : "minimum", "at least");
  bound(f.maximum, array ? "maxItems" : "maximum", "at most");
  if (f.fallback) {
    if (f.fallback->set_by.empty())
      p["default"] = f.fallback->value.is_number() ? schema_number(f.fallback->value)
                                                   : nlohmann::ordered_json(f.fallback->value);
    else
      description += "; default: the server's " + std::string(f.fallback->set_by);
  }
  p["description"] = description;
  properties_[std::string(f.name)] = p;
  if (!f.old_name.empty())
    properties_[std::string(f.old_name)] = {{"type", "string"},
                                            {"deprecated", true},
                                            {"description", "the first version's spelling: \"" +
                                                                std::string(f.old_name) + "\": X stands for \"" +
                                                                std::string(f.name) + "\": [X]; not both"}};
  if (f.required) {
    required_.push_back({std::string(f.name)});
    if (!f.old_name.empty()) required_.back().emplace_back(f.old_name);
  }
  if (!f.old_name.empty()) both_.push_back({std::string(f.name), std::string(f.old_name)});
}

nlohmann::ordered_json SchemaWriter::schema() const {
  nlohmann::ordered_json s{{"type", "object"}, {"additionalProperties", false}, {"properties", properties_}};
  nlohmann::ordered_json required = nlohmann::ordered_json::array(), rules = nlohmann::ordered_json::array();
  for (const std::vector<std::string>& names : required_) {
    if (names.size() == 1) {
      required.push_back(names.front());
      continue;
    }
    nlohmann::ordered_json any = nlohmann::ordered_json::array();
    for (const std::string& name : names) any.push_back({{"required", nlohmann::ordered_json::array({name})}});
    rules.push_back({{"anyOf", any}});
  }
  for (const std::vector<std::string>& pair : both_) rules.push_back({{"not", {{"required", pair}}}});
  if (!required.empty()) s["required"] = required;
  if (!rules.empty()) s["allOf"] = rules;
  return s;
}

}  // namespace attn::serve
