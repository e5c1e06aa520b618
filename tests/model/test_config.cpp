// ModelConfig's attention_dropout: JSON round trip, absent at 0 (model files of
// models without it stay byte for byte what they were), range checks, and
// every mixer's spec carries it.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "arch_variants.h"
#include "attn/core/error.h"
#include "attn/model/config.h"

using namespace attn;
using namespace attn::model;

namespace {

ModelConfig small_config(const std::string& arch) {
  ModelConfig c = preset(arch);
  c.vocab_size = 300;
  return c;
}

}  // namespace

TEST_CASE("config: attention_dropout is absent from the JSON at 0 and round-trips otherwise", "[model][config]") {
  ModelConfig c = small_config("transformer");
  const nlohmann::json plain = c.to_json();
  REQUIRE_FALSE(plain.contains("attention_dropout"));
  REQUIRE(ModelConfig::from_json(plain).attention_dropout == 0.0f);
  c.attention_dropout = 0.1f;
  const nlohmann::json with = c.to_json();
  REQUIRE(with.contains("attention_dropout"));
  const ModelConfig back = ModelConfig::from_json(nlohmann::json::parse(with.dump()));
  REQUIRE(back.attention_dropout == 0.1f);
  REQUIRE(back.to_json().dump() == with.dump());
  // Everything else is what it was without the option.
  nlohmann::json without = with;
  without.erase("attention_dropout");
  REQUIRE(without.dump() == plain.dump());
}

TEST_CASE("config: attention_dropout outside [0, 1) or NaN is rejected, naming the flag", "[model][config]") {
  for (float p : {-0.1f, 1.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    INFO("p " << p);
    ModelConfig c = small_config("transformer");
    c.attention_dropout = p;
    REQUIRE_THROWS_WITH(c.validate(), Catch::Contains("--attention-dropout"));
  }
  nlohmann::json j = small_config("transformer").to_json();
  j["attention_dropout"] = 1.0;
  REQUIRE_THROWS_WITH(ModelConfig::from_json(j), Catch::Contains("--attention-dropout"));
  j["attention_dropout"] = "0.1";
  REQUIRE_THROWS_AS(ModelConfig::from_json(j), Error);
  ModelConfig ok = small_config("transformer");
  ok.attention_dropout = 0.0f;
  ok.validate();
  ok.attention_dropout = 0.999f;
  ok.validate();
}

TEST_CASE("config: every encoder and decoder mixer spec carries attention_dropout", "[model][config]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO(v.arch << " " << v.decoder_mixer);
    ModelConfig c = arch_config(v);
    c.attention_dropout = 0.25f;
    for (std::int64_t layer = 0; layer < c.enc_layers; ++layer)
      REQUIRE(c.encoder_mixer(layer).attention_dropout == 0.25f);
    REQUIRE(c.decoder_self_mixer().attention_dropout == 0.25f);
    c.attention_dropout = 0.0f;
    REQUIRE(c.decoder_self_mixer().attention_dropout == 0.0f);
  }
}

TEST_CASE("config: norm is an enum stored as the text \"pre\" or \"post\"; other text is one clear error",
          "[model][config]") {
  ModelConfig c = small_config("transformer");
  REQUIRE(c.to_json().at("norm") == "pre");
  c.norm = Norm::post;
  const nlohmann::json post = c.to_json();
  REQUIRE(post.at("norm") == "post");
  REQUIRE(ModelConfig::from_json(nlohmann::json::parse(post.dump())).norm == Norm::post);
  REQUIRE(parse_norm("pre") == Norm::pre);
  REQUIRE_FALSE(parse_norm("Pre").has_value());
  nlohmann::json bad = post;
  bad["norm"] = "sideways";
  REQUIRE_THROWS_WITH(ModelConfig::from_json(bad), "model config: norm must be pre or post (got sideways)");
}
