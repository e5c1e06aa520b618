// Central finite differences for the layers: perturb one float of a
// parameter or input, rerun the forward, compare with the analytic gradient.
// The layers compute in float32, so the loss itself carries rounding noise of
// about 1e-7·|L|; the difference quotient then has noise ~|L|·1e-7/h, which
// sets the absolute tolerance. h = 1e-2 keeps that noise small. A ReLU kink
// within ±h spoils the central difference: then the one-sided differences
// disagree, and the analytic gradient must equal the one of the side without
// the kink (ReLU's derivative there is that side's). The estimate is retried
// with h/4 and h/16 against the same tolerance as h's: a smaller h must not
// loosen it (its noise can only make a retry fail, never pass).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/nn/context.h"
#include "attn/nn/param_store.h"
#include "attn/nn/token_mixer.h"

namespace attn::test {

struct GradCheckOptions {
  int samples_per_tensor = 6;
  float h = 1e-2f;
  double rtol = 2e-2;
  double noise = 5e-7;  // relative rounding noise of the loss, for the absolute tolerance
};

// Compares analytic with numeric gradients at `samples` positions of values[0..n).
// loss(): runs the forward and returns the scalar loss in double.
inline void check_gradient(const std::string& what, float* values, const float* analytic, std::int64_t n,
                           const std::function<double()>& loss, const GradCheckOptions& options, std::uint64_t seed) {
  Rng rng(seed);
  const double centre = loss();  // the loss at the unperturbed values, which every sample restores
  const double loss_size = std::abs(centre) + 1.0;
  const double atol = options.noise * loss_size / options.h;
  const int samples = static_cast<int>(std::min<std::int64_t>(n, options.samples_per_tensor));
  for (int s = 0; s < samples; ++s) {
    const std::int64_t i = n <= options.samples_per_tensor ? s : static_cast<std::int64_t>(rng.below(n));
    const double got = analytic[i];
    auto matches = [&](float h, double& numeric) {
      const float saved = values[i];
      values[i] = saved + h;
      const double up = loss();
      values[i] = saved - h;
      const double down = loss();
      values[i] = saved;
      numeric = (up - down) / (2.0 * h);
      const double left = (centre - down) / h, right = (up - centre) / h;
      UNSCOPED_INFO("h " << h << ": left " << left << ", right " << right);
      // One-sided differences carry twice the central one's rounding noise.
      const auto close = [&](double a, double b, double scale) {
        return std::abs(a - b) <= scale * atol + options.rtol * std::max(std::abs(a), std::abs(b));
      };
      if (close(got, numeric, 1.0)) return true;
      return !close(left, right, 2.0) && (close(got, left, 2.0) || close(got, right, 2.0));
    };
    double numeric = 0.0, retried = 0.0, retried_again = 0.0;
    const bool ok = matches(options.h, numeric) || matches(options.h / 4, retried) ||
                    matches(options.h / 16, retried_again);
    INFO(what << "[" << i << "]: analytic " << got << ", numeric " << numeric << " (h/4: " << retried
              << ", h/16: " << retried_again << ")");
    REQUIRE(ok);
  }
}

// Every parameter tensor of the store.
inline void check_all_parameters(nn::ParamStore& params, const std::function<double()>& loss,
                                 const GradCheckOptions& options = {}) {
  std::vector<float> analytic(params.grads().begin(), params.grads().end());
  for (std::size_t p = 0; p < params.entries().size(); ++p) {
    const nn::ParamInfo& info = params.entries()[p];
    check_gradient(info.name, params.values().data() + info.offset, analytic.data() + info.offset, info.shape.numel(),
                   loss, options, 1000 + p);
  }
}

// Σ w ⊙ y in double: the scalar loss whose gradient w.r.t. y is w.
inline double weighted_sum(const float* y, const std::vector<float>& w) {
  double s = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) s += static_cast<double>(w[i]) * y[i];
  return s;
}

// A ParamStore, step arena and Rng for one layer's test. ready() allocates
// and initialises the parameters, then moves the zero- and one-initialised
// ones (biases, norm gains, gate logits) by up to ±spread, so that their
// gradients are exercised too.
// The spec of one mixer: a mechanism (nn/mechanism.h) with its options by key.
inline nn::MixerSpec mixer_spec(const std::string& mechanism, std::int64_t d, std::int64_t heads, bool causal,
                                nlohmann::json options = nlohmann::json::object()) {
  nn::MixerSpec spec;
  spec.mechanism = mechanism;
  spec.d = d;
  spec.heads = heads;
  spec.causal = causal;
  spec.options = std::move(options);
  return spec;
}

struct LayerFixture {
  nn::ParamStore params;
  Arena arena;
  Rng rng{5};
  nn::StepContext ctx{params, arena, rng, false};

  void ready(std::uint64_t seed = 1, float spread = 0.2f) {
    params.allocate();
    Rng init(seed);
    params.initialize(init);
    for (const auto& p : params.entries())
      if (p.init == nn::Init::zeros || p.init == nn::Init::ones) {
        Rng r(seed + p.offset);
        for (std::int64_t i = 0; i < p.shape.numel(); ++i)
          params.values()[p.offset + i] += spread * (2 * r.uniform() - 1);
      }
  }
  const float* value(const std::string& name) const {
    const nn::ParamId id = params.find(name);
    REQUIRE(id >= 0);
    return params.value(id);
  }
};

// The loss Σ w ⊙ mixer(x) of a mixer test. loss() reruns the forward (for
// finite differences, which perturb x in place); backward() zeroes the
// parameter gradients, runs forward and backward once and returns dx.
class MixerLoss {
 public:
  MixerLoss(LayerFixture& f, const nn::TokenMixer& mixer, std::vector<float>& x, const std::vector<float>& w,
            std::int64_t batch, std::int64_t t, const std::int32_t* lengths)
      : f_(f), mixer_(mixer), x_(x), w_(w), batch_(batch), t_(t), lengths_(lengths), y_(x.size()) {}

  double loss() {
    f_.arena.reset();
    saved_ = mixer_.forward(f_.ctx, x_.data(), y_.data(), batch_, t_, lengths_);
    return weighted_sum(y_.data(), w_);
  }
  std::vector<float> backward() {
    f_.params.zero_grads();
    loss();
    std::vector<float> dx(x_.size(), 0.0f);
    mixer_.backward(f_.ctx, *saved_, w_.data(), dx.data());
    return dx;
  }
  const nn::TokenMixer::Saved& saved() const { return *saved_; }

 private:
  LayerFixture& f_;
  const nn::TokenMixer& mixer_;
  std::vector<float>& x_;
  const std::vector<float>& w_;
  std::int64_t batch_, t_;
  const std::int32_t* lengths_;
  std::vector<float> y_;  // [batch·t, d]
  std::unique_ptr<nn::TokenMixer::Saved> saved_;
};

}  // namespace attn::test
