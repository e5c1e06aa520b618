#include "attn/nn/mechanism.h"

#include <cmath>

#include "attn/core/error.h"

namespace attn::nn {

using nlohmann::json;

json Mechanism::document_extras(json& /*raw*/, bool /*causal*/, const std::vector<std::int64_t>& /*heads*/,
                                int /*precision*/) const {
  return json::object();
}

KeyWindow Mechanism::key_window(const json& /*raw*/, bool causal, std::int64_t /*head*/) const {
  KeyWindow w;
  if (causal) w.ahead = 0;
  return w;
}

json Mechanism::extras_schema() const { return {{"type", "object"}, {"additionalProperties", false}}; }

const Mechanism* mechanism_named(std::string_view name) {
  for (const Mechanism* m : mechanisms())
    if (m->name() == name) return m;
  return nullptr;
}

const Mechanism& find_mechanism(std::string_view name) {
  if (const Mechanism* m = mechanism_named(name)) return *m;
  throw Error("token mixer '" + std::string(name) + "' is not available in this build; choose one of " +
              mechanism_names());
}

const Mechanism* mechanism_of_kind(std::string_view kind) {
  for (const Mechanism* m : mechanisms())
    for (const MapKind& k : m->map_kinds())
      if (k.kind == kind) return m;
  return nullptr;
}

std::string mechanism_names() {
  std::string list;
  for (const Mechanism* m : mechanisms()) list += (list.empty() ? "" : ", ") + std::string(m->name());
  return list;
}

namespace {

// Numbers as the model config has always held them: floats.
json as_stored(const OptionField& option, json value) {
  if (option.type == OptionType::number) return static_cast<float>(value.get<double>());
  return value;
}

}  // namespace

json preset_value(const OptionField& option) { return as_stored(option, json::parse(option.preset)); }

json stored_options(const json& options) {
  json out = json::object();
  for (auto it = options.begin(); it != options.end(); ++it) {
    const OptionField* option = find_option(it.key());
    if (option && option->omit_at_preset && it.value() == preset_value(*option)) continue;
    out[it.key()] = it.value();
  }
  return out;
}

json preset_options() {
  json all = json::object();
  for (const Mechanism* m : mechanisms())
    for (const OptionField& o : m->options()) all[std::string(o.key)] = preset_value(o);
  return all;
}

const OptionField* find_option(std::string_view key) {
  for (const Mechanism* m : mechanisms())
    for (const OptionField& o : m->options())
      if (o.key == key) return &o;
  return nullptr;
}

namespace {

bool has_type(OptionType type, const json& v) {
  switch (type) {
    case OptionType::integer: return v.is_number_integer();
    case OptionType::number: return v.is_number() && std::isfinite(v.get<double>());
    case OptionType::boolean: return v.is_boolean();
    case OptionType::text: return v.is_string();
    case OptionType::integer_list:
      if (!v.is_array()) return false;
      for (const json& e : v)
        if (!e.is_number_integer()) return false;
      return true;
  }
  return false;
}

const char* type_words(OptionType type) {
  switch (type) {
    case OptionType::integer: return "a whole number";
    case OptionType::number: return "a finite number";
    case OptionType::boolean: return "true or false";
    case OptionType::text: return "a word";
    case OptionType::integer_list: return "whole numbers separated by commas";
  }
  return "";
}

}  // namespace

void check_option(const OptionField& option, const json& value) {
  const std::string flag(option.flag);
  require(has_type(option.type, value), flag + " must be " + type_words(option.type) + " (got " + value.dump() + ")");
  if (!option.allowed) return;
  const std::string allowed = option.allowed(value);
  require(allowed.empty(), flag + " must be " + allowed + " (got " +
                               (value.is_string() ? value.get<std::string>() : value.dump()) + ")");
}

json parse_option(const OptionField& option, const std::string& text) {
  const std::string flag(option.flag);
  auto whole = [&](const std::string& s) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == s.size() && !s.empty(), flag + " expects " + type_words(option.type) + " (got '" + text + "')");
    return static_cast<std::int64_t>(v);
  };
  json value;
  switch (option.type) {
    case OptionType::integer: value = whole(text); break;
    case OptionType::number: {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      // NaN and infinity are numbers to stod but no option's value (and JSON would show NaN as null).
      require(used == text.size() && !text.empty() && std::isfinite(v),
              flag + " expects a finite number (got '" + text + "')");
      value = v;
      break;
    }
    case OptionType::boolean: value = text == "true" || text == "1"; break;
    case OptionType::text: value = text; break;
    case OptionType::integer_list: {
      value = json::array();
      std::size_t start = 0;
      while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        value.push_back(whole(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      break;
    }
  }
  check_option(option, value);
  return as_stored(option, value);
}

std::unique_ptr<TokenMixer> make_mixer(ParamStore& params, const std::string& name, const MixerSpec& spec) {
  require_heads_divide(spec.d, spec.heads);
  const Mechanism& mechanism = find_mechanism(spec.mechanism);
  for (auto it = spec.options.begin(); it != spec.options.end(); ++it)
    if (const OptionField* option = find_option(it.key())) check_option(*option, it.value());
  mechanism.validate(spec);
  return mechanism.make(params, name, spec);
}

}  // namespace attn::nn
