// A mechanism module: everything attn knows about one attention mechanism —
// its options (defaults, checks, JSON keys in the model config, `attn train`
// flags and their help, all from one table), its mixer factory, the extras it
// adds to `attn attend`'s maps and how the page describes them, and its label.
// The registry (mechanisms()) lists the modules; config, the CLI, the maps
// and the page loop over it and never name a mechanism.
//
// Adding a mechanism: a folder src/nn/mechanisms/<name>/ with its mixer, a
// `mechanism.cpp` defining `const Mechanism& mechanism_<name>()` and a
// `page.js` with its drawing on the map pages (page_script), that function's
// declaration and entry in the list of src/nn/mechanisms/registry.cpp, its
// tests, and, for a new --arch, one row in the preset table
// (src/model/presets.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/nn/token_mixer.h"

namespace attn::nn {

enum class OptionType { integer, number, boolean, text, integer_list };

// One option of a mechanism. Options live flat in the model config's JSON
// (the keys of files written before mechanisms were modules: old files load).
struct OptionField {
  std::string_view key;   // JSON key in the model config, e.g. "csan_window"
  std::string_view flag;  // `attn train` flag, e.g. "--csan-window"
  std::string_view help;  // what it does, for --help
  OptionType type = OptionType::integer;
  // The value when neither the arch nor the user sets it, as JSON text: "11", "[3, 15]", "\"exp\"".
  std::string_view preset;
  // "" when `value` (already of `type`) is allowed, else what is allowed,
  // completing "--flag must be …", e.g. "an odd number ≥ 1, e.g. 11 for ±5".
  std::string (*allowed)(const nlohmann::json& value) = nullptr;
  // Options added after the first model files: left out of the config JSON
  // while at their preset, so the files and documents of models that do not
  // use them stay byte for byte what they were.
  bool omit_at_preset = false;
};

// The keys query i may attend to in a map: j with i − behind ≤ j ≤ i + ahead,
// clipped to the sentence. Every mechanism's mask is such a band: all keys
// (kUnbounded both ways), causal (ahead 0), a ConvSAN window (left, right),
// a strict Fast-DiSA direction (ahead −1 or behind −1).
struct KeyWindow {
  static constexpr std::int64_t kUnbounded = std::int64_t{1} << 40;
  std::int64_t behind = kUnbounded, ahead = kUnbounded;
  // The allowed keys of query i among `keys`: [first, last], empty when first > last.
  std::int64_t first(std::int64_t i) const { return i - behind < 0 ? 0 : i - behind; }
  std::int64_t last(std::int64_t i, std::int64_t keys) const { return i + ahead >= keys ? keys - 1 : i + ahead; }
};

// What a map's mechanism (a mixer's kind()) is called on the page.
struct MapKind {
  std::string_view kind;   // "csan2d"
  std::string_view label;  // "ConvSAN 2D window"
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // The name in --decoder-mixer, presets and MixerSpec::mechanism: "csan".
  virtual std::string_view name() const = 0;
  // For people: "Convolutional self-attention (ConvSAN)".
  virtual std::string_view label() const = 0;
  virtual std::span<const OptionField> options() const = 0;
  // Checks that need the layer's shape (e.g. Fast-DiSA's even heads when
  // bidirectional); options are complete and each already allowed. Throws Error.
  virtual void validate(const MixerSpec& /*spec*/) const {}
  // Declares the mixer's parameters under `name` and returns it.
  virtual std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name,
                                           const MixerSpec& spec) const = 0;

  // The kinds its mixers report in maps, with their labels.
  virtual std::span<const MapKind> map_kinds() const = 0;
  // The extras of one layer's map as the document shows them
  // (docs/attention-json.md), from the mixer's raw MixerMaps::extras: arrays
  // indexed by head hold the selected heads only, numbers rounded to
  // `precision` (distributions keep their sums). Keys it does not shape are
  // passed through rounded by the caller. `raw` is an object.
  virtual nlohmann::json document_extras(nlohmann::json& raw, bool causal, const std::vector<std::int64_t>& heads,
                                         int precision) const;
  // The keys head `head` of one layer's map may attend to, from the mixer's
  // raw MixerMaps::extras (attn attn-stats counts them: an entropy is
  // normalised by the log of this count). The default: every key, or keys ≤ i
  // when causal. The same mask as page_script's mask hook.
  virtual KeyWindow key_window(const nlohmann::json& raw, bool causal, std::int64_t head) const;
  // The JSON Schema of document_extras' result (decode/attention_schema.h):
  // the module's extras.schema.json; by default an empty object.
  virtual nlohmann::json extras_schema() const;
  // How the map pages draw its maps: a JavaScript object expression, the file
  // page.js in its folder (built in with ATTN_EMBED, core/embed.h). e is a
  // layer's extras, hi the head's index in them; every hook but note may be
  // left out:
  //   note(e, component) → the text under the large map (component "encoder",
  //     "decoder" or "cross")
  //   mask(e, hi) → (i, j) → whether query i may attend to key j, or null
  //     (the decoder's causal mask is the pages' own)
  //   outline(e, F, T, s, x0, y0, drawer) → SVG over a map of F × T cells of s
  //     px at (x0, y0) (drawer.bandOutline(left, right, F, T, s, x0, y0): a
  //     band window's)
  //   badge(e, hi) → HTML beside the head's name
  //   layerSummary(e, drawer) → HTML under the layer's name in the grid
  //   strips(e, hi, k) → the large map's side strips, F rows of s px, made with
  //     k.strip(title, cols, rows, tip) or k.titled(title) (k: {F, s, li,
  //     titled, strip, fmt, color}); stripColumns(e, f) → the columns they take,
  //     f the width of a strip column over a cell's
  //   stripTip(e, tip, i, j, k) → the tooltip over row i, column j of strip
  //     `tip` (k: {rowsTok, colsTok, hi, head, esc, fmt})
  // The drawing code (decode/maps_draw.h) calls them; it never reads a
  // mechanism's extras itself.
  virtual std::string_view page_script() const = 0;
};

// The registry, in a fixed order (mha first).
std::span<const Mechanism* const> mechanisms();
// The module of this name, or null.
const Mechanism* mechanism_named(std::string_view name);
// The same; throws attn::Error listing the known names.
const Mechanism& find_mechanism(std::string_view name);
// The module whose mixers report `kind` (a MapKind), or null.
const Mechanism* mechanism_of_kind(std::string_view kind);
// "mha, csan, muse, fastdisa"
std::string mechanism_names();

// Every option of every mechanism at its preset value: a flat JSON object.
nlohmann::json preset_options();
// An option's preset as JSON.
nlohmann::json preset_value(const OptionField& option);
// The options as the model config stores them (omit_at_preset ones left out at their preset).
nlohmann::json stored_options(const nlohmann::json& options);
// The option with this JSON key, or null.
const OptionField* find_option(std::string_view key);
// Throws attn::Error "--flag must be …" when `value` is not of the option's
// type or not allowed.
void check_option(const OptionField& option, const nlohmann::json& value);
// A flag's text as the option's type: "3,15" → [3, 15]. Throws Error naming the flag.
nlohmann::json parse_option(const OptionField& option, const std::string& text);

// A mechanism's option value, typed, from a spec: the spec's value, else the preset.
template <class T>
T option_value(const MixerSpec& spec, std::string_view key) {
  const auto it = spec.options.find(std::string(key));
  if (it != spec.options.end()) return it->template get<T>();
  return preset_value(*find_option(key)).template get<T>();
}

// make_mixer (token_mixer.h) looks the spec's mechanism up here.

}  // namespace attn::nn
