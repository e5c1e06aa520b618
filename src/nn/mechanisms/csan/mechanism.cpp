// Convolutional self-attention (Yang et al. 2019; docs/mechanisms-spec.md §2): 1D
// windows, or 2D windows over neighbouring heads. Its decoder (causal) form is
// our extension and always 1D.
#include "attn/core/embed.h"
#include "attn/core/error.h"
#include "attn/nn/map_json.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/mechanisms/csan/csan_mixer.h"

namespace attn::nn {

namespace {

ATTN_EMBED(attn_csan_page_js, "src/nn/mechanisms/csan/page.js");
ATTN_EMBED(attn_csan_extras_schema, "src/nn/mechanisms/csan/extras.schema.json");

using nlohmann::json;

std::string odd_positive(const json& v) {
  return v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() % 2 == 1 ? "" : "an odd number ≥ 1";
}

constexpr OptionField kOptions[] = {
    {"csan_window", "--csan-window", "keys within ±(W−1)/2 of the query", OptionType::integer, "11",
     [](const json& v) { return odd_positive(v).empty() ? std::string() : "an odd number ≥ 1, e.g. 11 for ±5"; }},
    {"csan_head_window", "--csan-head-window", "2D: neighbouring heads in one softmax", OptionType::integer, "3",
     odd_positive},
    {"csan_layers", "--csan-layers", "lowest encoder layers that are windowed (−1: the lower half)",
     OptionType::integer, "-1",
     [](const json& v) { return v.get<std::int64_t>() >= -1 ? std::string() : "−1 (the lower half) or 0 and more"; }},
    {"csan_head_boundary", "--csan-head-boundary",
     "2D heads beyond 0..H−1: drop them (ours), or wrap keys and clamp values (the authors' code)", OptionType::text,
     "\"drop\"", [](const json& v) { return v == "drop" || v == "wrap" ? std::string() : "drop or wrap"; },
     /*omit_at_preset=*/true},
};

constexpr MapKind kKinds[] = {{"csan", "ConvSAN 1D window"}, {"csan2d", "ConvSAN 2D window"}};

class Csan final : public Mechanism {
 public:
  std::string_view name() const override { return "csan"; }
  std::string_view label() const override { return "convolutional self-attention (ConvSAN)"; }
  std::span<const OptionField> options() const override { return kOptions; }
  // A head area of 2·heads − 1 reaches every head from any head: wider ones
  // change nothing (drop) or only repeat slots (wrap, the authors' slots).
  void validate(const MixerSpec& spec) const override {
    const auto head_window = option_value<std::int64_t>(spec, "csan_head_window");
    const std::int64_t widest = 2 * spec.heads - 1;
    require(head_window <= widest, "--csan-head-window " + std::to_string(head_window) + " is wider than " +
                                       std::to_string(spec.heads) + " heads allow (at most " + std::to_string(widest) +
                                       "); use a smaller odd number");
  }
  std::unique_ptr<TokenMixer> make(ParamStore& params, const std::string& name, const MixerSpec& spec) const override {
    if (!spec.causal) return std::make_unique<CsanMixer>(params, name, spec);
    MixerSpec one_d = spec;  // the causal window [i−(W−1)/2, i] of one head
    one_d.options["csan_head_window"] = 1;
    return std::make_unique<CsanMixer>(params, name, one_d);
  }
  std::span<const MapKind> map_kinds() const override { return kKinds; }
  json document_extras(json& raw, bool /*causal*/, const std::vector<std::int64_t>& heads,
                       int precision) const override {
    json e = json::object();
    if (raw.contains("head_weights")) {  // [heads][from][head_window], null where a head was dropped
      json per_head = json::array();
      for (const json& rows : select_heads(raw["head_weights"], heads)) {
        json out_rows = json::array();
        for (const json& row : rows) out_rows.push_back(rounded_row_with_nulls(row, precision));
        per_head.push_back(std::move(out_rows));
      }
      raw.erase("head_weights");
      e["head_weights"] = std::move(per_head);
    }
    return e;
  }
  // The band [i − left, i + right] (the 2D map sums the head area's weights per key: the same band).
  KeyWindow key_window(const json& raw, bool causal, std::int64_t head) const override {
    if (!raw.contains("left") || !raw.contains("right")) return Mechanism::key_window(raw, causal, head);
    return {raw["left"].get<std::int64_t>(), raw["right"].get<std::int64_t>()};
  }
  json extras_schema() const override { return json::parse(ATTN_EMBEDDED(attn_csan_extras_schema)); }
  std::string_view page_script() const override { return ATTN_EMBEDDED(attn_csan_page_js); }
};

}  // namespace

const Mechanism& mechanism_csan() {
  static const Csan m;
  return m;
}

}  // namespace attn::nn
