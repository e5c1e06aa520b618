// `attn train --attention-dropout P`: trains, is stored in the model's config
// only when used, changes training, and bad values are one line and exit 2.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "attn/core/safetensors.h"
#include "run_attn.h"

using namespace attn;
using test::require_user_error;
using test::run_attn;
using test::shell_words;

namespace {

nlohmann::json stored_config(const std::filesystem::path& model) {
  return nlohmann::json::parse(SafetensorsFile::read(model).metadata().at("config"));
}

}  // namespace

TEST_CASE("cli: train --attention-dropout trains a model that stores it; bad values exit 2", "[cli][train][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 200, 5);
  test::write_tiny_corpus(dir.path(), "valid", 10, 6);
  auto train = [&](const std::string& run, std::vector<std::string> more) {
    more.insert(more.end(), {"--max-updates", "4", "--log-every", "1"});
    const test::RunResult r = run_attn(shell_words(test::tiny_train_args(dir.path(), run, more)));
    INFO(r.err);
    REQUIRE(r.status == 0);
    return stored_config(dir.path() / run / "last.attn");
  };
  const nlohmann::json with = train("drop", {"--attention-dropout", "0.1"});
  REQUIRE(with.at("attention_dropout").get<float>() == 0.1f);
  const nlohmann::json without = train("plain", {});
  REQUIRE_FALSE(without.contains("attention_dropout"));
  const nlohmann::json zero = train("zero", {"--attention-dropout", "0"});
  REQUIRE(zero.dump() == without.dump());
  // The same run but for the attention dropout: a different training loss.
  const std::string log_drop = test::slurp(dir.path() / "drop" / "log.jsonl");
  const std::string log_plain = test::slurp(dir.path() / "plain" / "log.jsonl");
  auto losses = [](const std::string& log) {
    std::string found;
    std::size_t at = 0;
    while ((at = log.find("\"loss\":", at)) != std::string::npos)
      found += log.substr(at, log.find(',', at) - at) + ";", ++at;
    return found;
  };
  REQUIRE_FALSE(losses(log_drop).empty());
  REQUIRE(losses(log_drop) != losses(log_plain));
  for (const char* bad : {"1", "1.5", "-0.1", "nan", "inf"}) {
    INFO("--attention-dropout " << bad);
    require_user_error(run_attn(shell_words(test::tiny_train_args(dir.path(), "bad", {"--attention-dropout", bad}))),
                       "--attention-dropout");
  }
  REQUIRE_FALSE(std::filesystem::exists(dir.path() / "bad" / "last.attn"));
}
