// How DiSA and Fast-DiSA split their heads into directions (DiSAN, Shen et al.
// 2018, the masks of its section 3.2; docs/mechanisms-spec.md §0.4): in the encoder the first H/2 heads are
// forward (query i sees keys j < i) and the others backward (j > i), the
// diagonal excluded as in the authors' code; in the causal decoder (our
// extension) every head is forward with the diagonal on (j ≤ i), so the first
// position has a key.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "attn/core/error.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn::directional {

// What the split asks of a spec, checked before anything is declared: heads
// that divide d, and in the encoder an even number of them. `mechanism` names
// the mixer in the message ("DiSA", "Fast-DiSA").
inline void require_directional_heads(const MixerSpec& spec, std::string_view mechanism) {
  require_heads_divide(spec.d, spec.heads);
  require(spec.causal || spec.heads % 2 == 0, "--heads must be even for " + std::string(mechanism) +
                                                  "'s forward and backward heads (got " + std::to_string(spec.heads) +
                                                  "); choose an even number of heads");
}

// Keys [first, end) that query i of head h (of `heads`) may see in a sequence
// of length len; first ≥ end when it may see none.
inline void allowed_keys(bool causal, std::int64_t heads, std::int64_t h, std::int64_t i, std::int64_t len,
                         std::int64_t& first, std::int64_t& end) {
  if (causal) {  // every head forward, diagonal on
    first = 0;
    end = std::min(i + 1, len);
  } else if (h < heads / 2) {  // forward head: earlier keys only
    first = 0;
    end = std::min(i, len);
  } else {  // backward head: later keys only
    first = i + 1;
    end = std::max(first, len);
  }
}

// The maps' "directions" extra: "forward" or "backward" per head.
inline nlohmann::json direction_names(bool causal, std::int64_t heads) {
  nlohmann::json directions = nlohmann::json::array();
  for (std::int64_t h = 0; h < heads; ++h) directions.push_back(causal || h < heads / 2 ? "forward" : "backward");
  return directions;
}

// The maps' weights of DiSA and Fast-DiSA for a sequence of len positions,
// [heads][len][len]: P_ijk averaged over the head_dim features, where
// feature_sum(h, i, j) returns head h's Σ_k P_ijk as a double.
template <class FeatureSum>
MixerMaps feature_mean_maps(std::int64_t heads, std::int64_t head_dim, std::int64_t len, FeatureSum&& feature_sum) {
  MixerMaps maps = MixerMaps::zeros(heads, len);
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < len; ++i) {
      float* out = maps.weights.data() + (h * len + i) * len;
      for (std::int64_t j = 0; j < len; ++j)
        out[j] = static_cast<float>(feature_sum(h, i, j) / static_cast<double>(head_dim));
    }
  return maps;
}

// The maps' extras DiSA and Fast-DiSA share: "directions", then
// "averaged_over_features" (true: their weights are P_ijk averaged over the
// d_h features) and "fusion_gate" (FusionGate::feature_means, or null).
inline nlohmann::json map_extras(bool causal, std::int64_t heads, nlohmann::json fusion_gate) {
  return {{"directions", direction_names(causal, heads)},
          {"averaged_over_features", true},
          {"fusion_gate", std::move(fusion_gate)}};
}

}  // namespace attn::nn::directional
