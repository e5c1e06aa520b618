// bench_length's measurements (bench/length_measure.h) on small models: each
// part of a cell must measure, not fail quietly into a "-" of the table.
#include <string>

#include "../../bench/length_measure.h"
#include "../support.h"
#include "attn/model/config.h"

using namespace attn;

namespace {

model::ModelConfig small(const std::string& arch) {
  model::ModelConfig config = model::preset(arch);
  config.vocab_size = bench::length::kVocab;  // the ids the measurements draw
  config.dim = 32;
  config.ffn_dim = 64;
  config.heads = 4;
  config.enc_layers = config.dec_layers = 1;
  return config;
}

}  // namespace

TEST_CASE("bench_length: every arch's attention memory, training step and decoding are measured", "[bench]") {
  for (const std::string& arch : bench::length::Options{}.archs) {
    INFO("arch " << arch);
    const model::ModelConfig config = small(arch);
    const double short_bytes = bench::length::measure_attention_bytes(config, 2, 8);
    const double long_bytes = bench::length::measure_attention_bytes(config, 2, 32);
    REQUIRE(short_bytes > 0);
    REQUIRE(long_bytes > short_bytes);  // four times the rows at least
    const bench::length::TrainResult train = bench::length::measure_training(config, 2, 8, 1);
    REQUIRE(train.tokens_per_s > 0);
    REQUIRE(train.step_bytes > 0);
    bench::length::Options o;
    o.decode_max = 1;
    o.decode_runs = 1;
    const bench::length::DecodeResult decode = bench::length::measure_decoding(config, 8, o);
    REQUIRE(decode.sentences == 1);
    REQUIRE(decode.ms_per_sentence > 0);
  }
}
