// attn against a committed float64 reference from its PyTorch twin, on every
// run and without PyTorch (after llm.c's test_gpt2.c): for each row of the
// twin's matrix (every arch, both norms, every embedding sharing, the decoder
// mixers), the same tiny model is rebuilt from its config and init seed, run
// on the same batch, and its label-smoothed loss, NLL and every parameter
// gradient's norm are compared with what the twin computed in float64.
// tests/model/twin_reference.json is written by
//   bench/twin/crosscheck.py --twin-dump build/twin_dump --write-reference tests/model/twin_reference.json
// (make twin-check runs the element-wise comparison, with PyTorch).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/model/batch.h"
#include "attn/model/config.h"
#include "attn/model/seq2seq.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_reference() {
  const fs::path path = fs::path(__FILE__).parent_path() / "twin_reference.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// A gradient norm within 1e-3 of the twin's, relative to the larger of the
// tensor's own norm and 1e-3 of the model's largest: gradients that are zero in
// exact arithmetic (attention's key biases) are float32 rounding noise alone.
bool norm_matches(double own, double reference, double largest) {
  return std::abs(own - reference) <= 1e-3 * std::max(reference, 1e-3 * largest);
}

}  // namespace

TEST_CASE("twin reference: loss and gradient norms equal the float64 PyTorch twin's on every arch", "[model][twin]") {
  const nlohmann::json reference = read_reference();
  REQUIRE(reference.at("rows").size() >= 10);
  for (const nlohmann::json& row : reference.at("rows")) {
    const std::string label = row.at("label");
    INFO(label);
    // The model as `twin_dump init` built it: initialised from the seed, then every value perturbed.
    model::Seq2Seq model(model::ModelConfig::from_json(row.at("config")));
    Rng init(row.at("init_seed").get<std::uint64_t>());
    model.initialize(init);
    const float perturb = row.at("perturb");
    for (float& v : model.params().values()) v += perturb * init.normal();

    const auto sources = row.at("sources").get<std::vector<std::vector<std::int32_t>>>();
    const auto targets = row.at("targets").get<std::vector<std::vector<std::int32_t>>>();
    const model::Batch batch = model::make_batch(sources, targets);
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{model.params(), arena, rng, false};
    model.params().zero_grads();
    const nn::LossSums sums = model.forward_backward(ctx, batch, row.at("label_smoothing"), true, 1.0f);

    REQUIRE(sums.tokens == row.at("tokens").get<std::int64_t>());
    CHECK(sums.loss == Approx(row.at("loss").get<double>()).epsilon(1e-6));
    CHECK(sums.nll == Approx(row.at("nll").get<double>()).epsilon(1e-6));
    const nlohmann::json& norms = row.at("grad_norms");
    REQUIRE(norms.size() == model.params().entries().size());
    double largest = 0.0;
    for (const auto& [name, norm] : norms.items()) largest = std::max(largest, norm.get<double>());
    for (const nn::ParamInfo& p : model.params().entries()) {
      INFO(p.name);
      REQUIRE(norms.contains(p.name));
      const float* g = model.params().grad(model.params().find(p.name));
      double sq = 0.0;
      for (std::int64_t i = 0; i < p.shape.numel(); ++i) sq += static_cast<double>(g[i]) * g[i];
      const double own = std::sqrt(sq), expected = norms.at(p.name).get<double>();
      INFO("attn " << own << " twin " << expected);
      CHECK(norm_matches(own, expected, largest));
    }
  }
}
