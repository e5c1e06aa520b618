// ReLU / GELU kernels against double references and finite differences, on
// every ISA with 1 and 2 threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../support.h"
#include "attn/kernels/activation.h"

using namespace attn;
using namespace attn::kernels;

namespace {

const std::vector<std::int64_t> kSizes = {1, 2, 7, 17, 63, 64, 65, 129, 1000, 1 << 16};

double act_reference(Activation act, double x) {
  switch (act) {
    case Activation::relu: return x > 0.0 ? x : 0.0;
    case Activation::gelu: {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case Activation::none: return x;
  }
  return 0.0;
}

const char* name_of(Activation act) {
  return act == Activation::relu ? "relu" : act == Activation::gelu ? "gelu" : "none";
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("activation_forward matches double references on every ISA", "[kernels][activation]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu}) {
      for (std::int64_t n : kSizes) {
        for (float range : {4.0f, 40.0f}) {
          INFO(name_of(act) << ", n " << n << ", range " << range);
          const auto x = test::random_vector(static_cast<std::size_t>(n), 5 + n, -range, range);
          std::vector<float> y(x.size());
          activation_forward(act, x.data(), y.data(), n);
          std::vector<double> want(x.size());
          for (std::size_t i = 0; i < x.size(); ++i) want[i] = act_reference(act, x[i]);
          test::require_close(y, want, 1e-7, 2e-6);
          std::vector<float> in_place = x;
          activation_forward(act, in_place.data(), in_place.data(), n);
          REQUIRE(bitwise_equal(in_place, y));
        }
      }
    }
    // Tails (where x³ overflows) and NaN, which propagates.
    std::vector<float> x = {-1e30f, -100.0f, -10.0f, 0.0f, 100.0f, 1e30f};
    std::vector<float> y(x.size());
    activation_forward(Activation::gelu, x.data(), y.data(), static_cast<std::int64_t>(x.size()));
    test::require_close(y, {0.0, 0.0, act_reference(Activation::gelu, -10.0), 0.0, 100.0, 1e30}, 1e-30, 1e-5);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (Activation act : {Activation::relu, Activation::gelu}) {
      float value = nan;
      activation_forward(act, &value, &value, 1);
      REQUIRE(std::isnan(value));
    }
  });
}

TEST_CASE("activation_backward matches finite differences and accumulates", "[kernels][activation]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu}) {
      for (std::int64_t n : kSizes) {
        INFO(name_of(act) << ", n " << n);
        auto x = test::random_vector(static_cast<std::size_t>(n), 50 + n, -6.0f, 6.0f);
        for (float& v : x)  // keep finite differences away from ReLU's kink
          if (std::abs(v) < 1e-3f) v = 0.5f;
        const auto dy = test::random_vector(x.size(), 60 + n);
        const auto start = test::random_vector(x.size(), 70 + n);
        std::vector<float> dx = start;
        activation_backward(act, x.data(), dy.data(), dx.data(), n);
        // L = Σ dy ⊙ act(x) is a sum of terms in one x each: ∂L/∂x_i = dy_i · act'(x_i).
        std::vector<double> want(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
          double xi = x[i];
          want[i] = start[i] + dy[i] * test::central_difference([&] { return act_reference(act, xi); }, xi);
        }
        test::require_close(dx, want, 1e-5, 1e-4);
      }
    }
  });
}

TEST_CASE("bias_activation_forward adds the bias, saves the pre-activation, applies the activation",
          "[kernels][activation]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu}) {
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 17}, {5, 65}, {64, 1024}}) {
        for (bool with_bias : {false, true}) {
          for (bool with_pre : {false, true}) {
            INFO(name_of(act) << ", rows " << rows << ", cols " << cols << ", bias " << with_bias << ", pre "
                              << with_pre);
            const std::size_t size = static_cast<std::size_t>(rows * cols);
            const auto input = test::random_vector(size, 80 + cols, -3.0f, 3.0f);
            const auto bias = test::random_vector(static_cast<std::size_t>(cols), 90 + cols);
            std::vector<float> y = input, pre(size, -7.0f);
            bias_activation_forward(act, y.data(), with_bias ? bias.data() : nullptr, with_pre ? pre.data() : nullptr,
                                    rows, cols);
            std::vector<double> want_pre(size), want_y(size);
            for (std::int64_t r = 0; r < rows; ++r)
              for (std::int64_t j = 0; j < cols; ++j) {
                const std::size_t i = static_cast<std::size_t>(r * cols + j);
                want_pre[i] = static_cast<double>(input[i] + (with_bias ? bias[j] : 0.0f));
                want_y[i] = act_reference(act, want_pre[i]);
              }
            test::require_close(y, want_y, 1e-7, 2e-6);
            if (with_pre)
              test::require_close(pre, want_pre, 1e-30, 0.0);  // exact
            else
              REQUIRE(pre == std::vector<float>(size, -7.0f));
          }
        }
      }
    }
  });
}
