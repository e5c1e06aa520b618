// TokenMixer: the sublayer through which the positions of one sequence see
// each other — the self-attention slot of an encoder or decoder layer. Every
// mechanism (multi-head attention, ConvSAN windows, MUSE, Fast-DiSA) is one
// implementation, so the layers, the model, training, decoding and `attn
// attend` never name a mechanism.
//
// Shapes: rows are positions, [B·T, d] right-padded, lengths [B]. A mixer
// never reads a padded position's values into a real position's output, and
// writes zeros (or anything finite) into padded rows; the layers never read
// them back into real rows.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/nn/context.h"

namespace attn::nn {

// The attention weights a mixer used for one sequence, for `attn attend`.
struct MixerMaps {
  std::int64_t heads = 0, length = 0;
  std::vector<float> weights;  // [heads, length (from), length (to)]; rows sum to 1, or are all 0 when empty
  nlohmann::json extras;       // mechanism-specific (kernel gate, window, direction, fusion gate, …)

  // Maps of `heads` heads over `length` positions, every weight 0 and no extras.
  static MixerMaps zeros(std::int64_t heads, std::int64_t length);
};

// Everything that shapes a mixer; built from the model config per layer.
struct MixerSpec {
  std::string mechanism = "mha";  // a registry name (nn/mechanism.h): mha, csan, muse, fastdisa
  std::int64_t d = 0, heads = 0;
  bool causal = false;  // decoder self-attention
  // The layer's index in its stack (encoder or decoder): for mechanisms whose
  // shape changes with depth (LightConv's kernel sizes).
  std::int64_t layer = 0;
  // Dropout on the attention weights after the softmax, in training only
  // (`--attention-dropout`; 0: none). Every mixer applies it to the weights
  // that multiply the values (nn/attention.h, WeightDropout); the decoder's
  // cross-attention takes it from its layer's spec too.
  float attention_dropout = 0.0f;
  // The mechanism's options by their model-config keys ("csan_window": 11);
  // a missing key means the option's preset value.
  nlohmann::json options = nlohmann::json::object();
};

// Throws attn::Error, naming --dim and --heads, unless both are positive and
// heads divides d (every head gets d / heads features).
void require_heads_divide(std::int64_t d, std::int64_t heads);

class TokenMixer {
 public:
  virtual ~TokenMixer() = default;

  // What backward needs from one forward; its pointers live until the step
  // arena is reset.
  struct Saved {
    virtual ~Saved() = default;
  };

  // x: [B·T, d] → y: [B·T, d] (written). Causal mixers let position i see only
  // positions ≤ i (whatever `causal` means for the mechanism is fixed at
  // construction). `saved` receives what backward needs: made when null, else
  // this mixer's Saved of an earlier forward, refilled — training keeps the
  // layers' Saved from step to step, so a step allocates nothing.
  virtual void forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                       const std::int32_t* lengths, std::unique_ptr<Saved>& saved) const = 0;
  // The same into a new Saved (attn attend, tests).
  std::unique_ptr<Saved> forward(StepContext& ctx, const float* x, float* y, std::int64_t batch, std::int64_t t,
                                 const std::int32_t* lengths) const {
    std::unique_ptr<Saved> saved;
    forward(ctx, x, y, batch, t, lengths, saved);
    return saved;
  }
  // dy: [B·T, d]. Accumulates parameter gradients and dx: [B·T, d].
  virtual void backward(StepContext& ctx, const Saved& saved, const float* dy, float* dx) const = 0;

  // Incremental decoding (causal mixers only). The cache holds cache_width()
  // floats per hypothesis and position: [N, t_max, cache_width()]. step()
  // writes position t's entry and reads entries < t written by earlier steps;
  // beam search reorders whole [t_max, cache_width()] blocks between steps.
  // x: [N, d] at position t → y: [N, d] (written). Must equal the full causal
  // forward at row t to float rounding.
  virtual std::int64_t cache_width() const = 0;
  virtual void step(StepContext& ctx, const float* x, float* y, std::int64_t n, std::int64_t t, float* cache,
                    std::int64_t t_max) const = 0;

  // The weights the forward that produced `saved` used for sequence b.
  virtual MixerMaps export_maps(const Saved& saved, std::int64_t b) const = 0;

  // The name of this mixer's variant in maps and logs: one of its mechanism's map_kinds().
  virtual std::string kind() const = 0;

 protected:
  // The mixer's own Saved type S in `saved`, made on first use.
  template <class S>
  static S& reuse(std::unique_ptr<Saved>& saved) {
    if (!saved) saved = std::make_unique<S>();
    return static_cast<S&>(*saved);
  }
};

// Declares the parameters of the mixer of the spec's mechanism under `name`
// (e.g. "enc.0.self_attn") and returns it. Throws attn::Error for impossible specs.
std::unique_ptr<TokenMixer> make_mixer(ParamStore& params, const std::string& name, const MixerSpec& spec);

}  // namespace attn::nn
