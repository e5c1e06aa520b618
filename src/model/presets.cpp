#include "attn/model/presets.h"

#include "attn/core/error.h"

namespace attn::model {

namespace {

// One preset a row: clang-format would put each field of a row that wraps on a
// line of its own. (Off until after the namespace's end: docs/fifth-mechanism.patch
// adds a row, and its context is the lines after the table.)
// clang-format off
constexpr ArchPreset kPresets[] = {
    {.name = "transformer", .encoder = "mha", .decoder = "mha", .about = "multi-head attention everywhere (the baseline)"},
    {.name = "muse", .encoder = "muse", .decoder = "muse", .parallel = true,
     .about = "MUSE: attention ∥ dynamic convolutions over a shared V, parallel layers"},
    {.name = "muse-simple", .encoder = "mha", .decoder = "mha", .parallel = true,
     .about = "MUSE's parallel layers without the convolutions"},
    {.name = "muse-separate", .encoder = "muse", .decoder = "muse", .parallel = true,
     .fixed = R"({"muse_separate_projection": true})",
     .about = "MUSE whose convolutions read their own projection (the unified-space ablation)"},
    {.name = "convsan", .encoder = "csan", .lower_layers_option = "csan_layers", .encoder_upper = "mha",
     .decoder = "mha", .fixed = R"({"csan_head_window": 1})",
     .about = "ConvSAN: 1D windows in the lower encoder layers"},
    {.name = "convsan2d", .encoder = "csan", .lower_layers_option = "csan_layers", .encoder_upper = "mha",
     .decoder = "mha", .about = "ConvSAN 2D: windows over neighbouring heads in the lower encoder layers"},
    {.name = "fastdisa", .encoder = "fastdisa", .decoder = "mha",
     .about = "Fast-DiSA: directional feature-wise encoder self-attention"},
    {.name = "disa", .encoder = "disa", .decoder = "mha",
     .about = "DiSA (DiSAN): Fast-DiSA's yardstick, its T×T×d feature-wise tensor held"},
    {.name = "lightconv", .encoder = "lightconv", .decoder = "lightconv",
     .about = "LightConv: GLU, depth-wise convolutions with softmax kernels shared per head, kernels growing with depth"},
    {.name = "dynamicconv", .encoder = "dynamicconv", .decoder = "dynamicconv",
     .about = "DynamicConv: LightConv whose kernels are predicted from each token"},
};

}  // namespace
// clang-format on

std::span<const ArchPreset> arch_presets() { return kPresets; }

const ArchPreset& find_preset(std::string_view arch) {
  for (const ArchPreset& p : kPresets)
    if (p.name == arch) return p;
  throw Error("--arch " + std::string(arch) + " is not available; choose one of " + known_archs());
}

bool is_known_arch(const std::string& arch) {
  for (const ArchPreset& p : kPresets)
    if (p.name == arch) return true;
  return false;
}

std::string known_archs() {
  std::string list;
  for (const ArchPreset& p : kPresets) list += (list.empty() ? "" : ", ") + std::string(p.name);
  return list;
}

nlohmann::json fixed_options(const ArchPreset& preset) { return nlohmann::json::parse(preset.fixed); }

}  // namespace attn::model
