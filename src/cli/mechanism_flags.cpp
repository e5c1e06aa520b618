// Every mechanism option as an `attn train` flag, from the modules' tables
// (nn/mechanism.h): the flag, its help and its check are declared once.
#include <CLI/CLI.hpp>

#include <charconv>

#include "attn/cli/commands.h"
#include "attn/nn/mechanism.h"

namespace attn::cli {

namespace {

// A number as a user types it: 0.1 for the float 0.1f (not JSON's 0.10000000149011612).
std::string number_text(const nlohmann::json& v) {
  if (!v.is_number_float()) return v.dump();
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, static_cast<float>(v.get<double>())).ptr;
  return std::string(text, end);
}

// "3,15" for [3, 15], "exp" for "exp", "on" for true: the preset as a user types it.
std::string preset_text(const nn::OptionField& option) {
  const nlohmann::json v = nn::preset_value(option);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (!v.is_array()) return number_text(v);
  std::string text;
  for (const auto& e : v) text += (text.empty() ? "" : ",") + number_text(e);
  return text;
}

// What --help shows after the flag.
const char* type_name(nn::OptionType type) {
  switch (type) {
    case nn::OptionType::integer: return "INT";
    case nn::OptionType::number: return "FLOAT";
    case nn::OptionType::integer_list: return "INT,...";
    case nn::OptionType::boolean:
    case nn::OptionType::text: break;
  }
  return "TEXT";
}

}  // namespace

void add_mechanism_flags(CLI::App& sub, nlohmann::json& given) {
  for (const nn::Mechanism* mechanism : nn::mechanisms())
    for (const nn::OptionField& option : mechanism->options()) {
      const std::string flag(option.flag), key(option.key);
      const std::string help = std::string(mechanism->name()) + ": " + std::string(option.help) +
                               " (preset: " + preset_text(option) + ")";
      if (option.type == nn::OptionType::boolean) {
        sub.add_flag_function(
            flag + ",!--no-" + flag.substr(2), [&given, key](std::int64_t count) { given[key] = count > 0; }, help);
      } else {
        sub.add_option_function<std::string>(
               flag,
               [&given, &option](const std::string& text) {
                 given[std::string(option.key)] = nn::parse_option(option, text);
               },
               help)
            ->type_name(type_name(option.type));
      }
    }
}

std::string decoder_mixer_help() {
  return "decoder self-attention: " + nn::mechanism_names() + " (our causal variants; default: the arch's)";
}

}  // namespace attn::cli
