#include "attn/serve/model_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "attn/core/error.h"

namespace attn::serve {

namespace {

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

bool file_exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

// An argument's readings, in order of preference: NAME=FILE:TYPE, NAME=FILE,
// FILE:TYPE, FILE; only those whose parts are well formed.
std::vector<ModelSpec> readings(const std::string& spec) {
  std::vector<ModelSpec> out;
  const auto with_type = [&](const std::string& name, const std::string& text) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) return;
    if (const auto type = model::parse_compute_type(std::string_view(text).substr(colon + 1)))
      if (colon > 0) out.push_back({name, text.substr(0, colon), type});
  };
  const std::size_t eq = spec.find('=');
  if (eq != std::string::npos && valid_name(spec.substr(0, eq))) {
    with_type(spec.substr(0, eq), spec.substr(eq + 1));
    if (eq + 1 < spec.size()) out.push_back({spec.substr(0, eq), spec.substr(eq + 1), std::nullopt});
  }
  with_type("", spec);
  if (!spec.empty()) out.push_back({"", spec, std::nullopt});
  return out;
}

}  // namespace

ModelSpec parse_model_spec(const std::string& spec, const std::function<bool(const std::string&)>& exists_given) {
  const std::function<bool(const std::string&)> exists = exists_given ? exists_given : file_exists;
  const std::vector<ModelSpec> read = readings(spec);
  for (const ModelSpec& r : read)
    if (exists(r.file)) return r;
  // No reading names a file: say which part is wrong.
  const std::size_t eq = spec.find('=');
  const bool named = eq != std::string::npos && valid_name(spec.substr(0, eq));
  const std::string file_part = named ? spec.substr(eq + 1) : spec;
  const std::size_t colon = file_part.rfind(':');
  if (colon != std::string::npos && !model::parse_compute_type(std::string_view(file_part).substr(colon + 1))) {
    const std::string type = file_part.substr(colon + 1);
    const std::string file = colon == 0 ? "FILE" : file_part.substr(0, colon);
    require(false,
            "-m " + spec + ": " +
                (type.empty() ? std::string("no compute type after ':'") : "'" + type + "' is not a compute type") +
                " (and no file is named " + file_part + "); give " + file + ":fp32, " + file + ":bf16 or " + file +
                ":int8, or " + file + " alone for --compute-type's");
  }
  require(eq == std::string::npos || named,
          "-m " + spec + ": '" + spec.substr(0, eq) +
              "' is not a model name (letters, digits, '.', '_' and '-'), and no file is named " + spec +
              "; e.g. -m muse=" + spec.substr(eq + 1));
  require(!file_part.empty() && colon != 0,
          "-m " + spec + ": no model file given; e.g. -m muse=runs/muse/best.attn:int8");
  return read.front();  // its file is missing: the loader says so, naming it
}

std::vector<std::string> model_names(const std::vector<ModelSpec>& specs, const std::vector<std::string>& archs) {
  std::vector<std::string> names(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    names[i] = specs[i].name;
    for (std::size_t j = 0; j < i; ++j)
      require(names[i].empty() || names[i] != names[j], "-m " + names[i] + "=" + specs[i].file + ": the name " +
                                                            names[i] + " is given twice; give each model its own name");
  }
  // Unnamed models are called by their arch, numbered when it repeats.
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!names[i].empty()) continue;
    std::string name = archs[i];
    for (int k = 2; std::find(names.begin(), names.end(), name) != names.end(); ++k)
      name = archs[i] + "-" + std::to_string(k);
    names[i] = name;
  }
  return names;
}

}  // namespace attn::serve
