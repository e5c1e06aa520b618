// AdamW update against a double-precision reference over several steps.
#include <cmath>
#include <vector>

#include "../support.h"
#include "attn/kernels/adam.h"

using namespace attn;
using namespace attn::kernels;

namespace {

struct State {
  std::vector<double> param, m, v;
};

void adam_reference(State& s, const std::vector<float>& grad, const AdamHyper& h, double grad_scale) {
  const double bc1 = 1.0 - std::pow(static_cast<double>(h.beta1), static_cast<double>(h.step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(h.beta2), static_cast<double>(h.step));
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const double g = grad_scale * grad[i];
    s.m[i] = h.beta1 * s.m[i] + (1.0 - h.beta1) * g;
    s.v[i] = h.beta2 * s.v[i] + (1.0 - h.beta2) * g * g;
    const double update = (s.m[i] / bc1) / (std::sqrt(s.v[i] / bc2) + h.eps);
    s.param[i] -= static_cast<double>(h.lr) * update + static_cast<double>(h.lr) * h.weight_decay * s.param[i];
  }
}

}  // namespace

TEST_CASE("adam_update follows the AdamW formula over several steps", "[kernels][adam]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (std::int64_t n : {1, 2, 7, 17, 63, 64, 65, 129, 1 << 16}) {
      for (float weight_decay : {0.0f, 0.1f}) {
        INFO("n " << n << ", weight decay " << weight_decay);
        const std::size_t size = static_cast<std::size_t>(n);
        std::vector<float> param = test::random_vector(size, 1 + n), m(size, 0.0f), v(size, 0.0f);
        State ref{{param.begin(), param.end()}, std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
        AdamHyper hyper;
        hyper.lr = 5e-3f;
        hyper.beta1 = 0.9f;
        hyper.beta2 = 0.98f;
        hyper.eps = 1e-8f;
        hyper.weight_decay = weight_decay;
        for (std::int64_t step = 1; step <= 4; ++step) {
          hyper.step = step;
          // Gradients of mixed magnitude, some exactly zero.
          auto grad = test::random_vector(size, 100 * step + n, -2.0f, 2.0f);
          for (std::size_t i = 0; i < size; i += 5) grad[i] *= 1e-4f;
          for (std::size_t i = 3; i < size; i += 11) grad[i] = 0.0f;
          const float grad_scale = step == 3 ? 0.25f : 1.0f;  // a clipping step
          adam_update(param.data(), grad.data(), m.data(), v.data(), n, hyper, grad_scale);
          adam_reference(ref, grad, hyper, grad_scale);
        }
        test::require_close(m, ref.m, 1e-7, 1e-5);  // m can cancel to far below its terms
        test::require_close(v, ref.v, 1e-9, 1e-5);
        // The parameter moves by about lr per step; compare the move closely.
        test::require_close(param, ref.param, 1e-7, 1e-6);
      }
    }
  });
}

TEST_CASE("adam_update: the first step moves each parameter by lr against the gradient sign", "[kernels][adam]") {
  test::for_each_isa_and_threads([](Isa, int) {
    std::vector<float> param = {1.0f, 1.0f, 1.0f}, grad = {3.0f, -0.001f, 0.0f}, m(3, 0.0f), v(3, 0.0f);
    AdamHyper hyper;
    hyper.lr = 0.01f;
    adam_update(param.data(), grad.data(), m.data(), v.data(), 3, hyper, 1.0f);
    test::require_close(param, {0.99, 1.01, 1.0}, 1e-6, 1e-6);
  });
}
