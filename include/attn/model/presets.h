// The architectures of `--arch`, as data: one row each (docs/mechanisms-spec.md §0.5).
// A new architecture is a new row in src/model/presets.cpp.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace attn::model {

struct ArchPreset {
  std::string_view name;     // "convsan2d"
  std::string_view encoder;  // mechanism of the encoder's self-attention (nn/mechanism.h)
  // When set, `encoder` is used in the lowest layers only — as many as this
  // option says (−1: the lower half, ⌈L/2⌉) — and `encoder_upper` above them.
  std::string_view lower_layers_option = {};
  std::string_view encoder_upper = {};
  std::string_view decoder;  // mechanism of the decoder's (causal) self-attention
  bool parallel = false;     // MUSE's layout: attention, FFN (and cross-attention) branches summed in one residual
  // Options the arch fixes, as a JSON object text: "{\"csan_head_window\": 1}". They win
  // over the config's values when the model is built (and are not stored: the arch says them).
  std::string_view fixed = "{}";
  std::string_view about;  // one line for --help and docs
};

std::span<const ArchPreset> arch_presets();
// Throws attn::Error naming the known archs.
const ArchPreset& find_preset(std::string_view arch);
bool is_known_arch(const std::string& arch);
// "transformer, muse, muse-simple, muse-separate, convsan, convsan2d, fastdisa"
std::string known_archs();
nlohmann::json fixed_options(const ArchPreset& preset);

}  // namespace attn::model
