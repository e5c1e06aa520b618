// `attn average`: the mean of checkpoints, parameter by parameter.
#include "../support.h"
#include "run_attn.h"

#include "attn/model/model_file.h"

using namespace attn;

namespace {

model::ModelConfig tiny_config(std::int64_t vocab, std::int64_t dim) {
  model::ModelConfig c;
  c.vocab_size = vocab;
  c.dim = dim;
  c.heads = 2;
  c.ffn_dim = 12;
  c.enc_layers = 1;
  c.dec_layers = 1;
  c.max_positions = 32;
  return c;
}

std::vector<float> save_random_model(const std::string& path, std::uint64_t seed, std::int64_t dim = 8) {
  const text::Bpe bpe;
  model::Seq2Seq model(tiny_config(bpe.vocab().size(), dim));
  Rng init(seed);
  model.initialize(init);
  model::save_model_file(path, model, bpe);
  return {model.params().values().begin(), model.params().values().end()};
}

}  // namespace

TEST_CASE("average: --last N averages the newest N checkpoints of a run, parameter by parameter",
          "[cli][average][e2e]") {
  test::ScratchDir dir;
  const std::string run = dir.path().string();
  save_random_model(run + "/ckpt.5.attn", 1);
  const std::vector<float> a = save_random_model(run + "/ckpt.20.attn", 2);
  const std::vector<float> b = save_random_model(run + "/ckpt.100.attn", 3);
  const test::RunResult r = test::run_attn("average --last 2 " + run + " -o " + run + "/avg.attn");
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.find("ckpt.20.attn,ckpt.100.attn") != std::string::npos);  // numeric, not lexical, order
  const model::LoadedModel avg = model::load_model_values(run + "/avg.attn");
  const auto values = avg.model->params().values();
  REQUIRE(values.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(values[i] == Approx(0.5 * (a[i] + b[i])).margin(1e-7));
}

TEST_CASE("average: checkpoints of different models are refused, nothing written", "[cli][average][e2e]") {
  test::ScratchDir dir;
  const std::string run = dir.path().string();
  save_random_model(run + "/a.attn", 1, 8);
  save_random_model(run + "/b.attn", 2, 12);
  const test::RunResult r = test::run_attn("average " + run + "/a.attn " + run + "/b.attn -o " + run + "/avg.attn");
  REQUIRE(r.status == 2);
  REQUIRE(r.err.find("different model config") != std::string::npos);
  REQUIRE(!std::filesystem::exists(run + "/avg.attn"));
  const test::RunResult empty = test::run_attn("average --last 3 " + run + " -o " + run + "/avg.attn");
  REQUIRE(empty.status == 2);
  REQUIRE(empty.err.find("--keep-last") != std::string::npos);
}
