// `attn quantize`: a model file with its weight matrices in int8, read by
// every command; bad input is one line and exit status 2, nothing written.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"

#include "attn/core/safetensors.h"
#include "attn/model/model_file.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// A tiny MUSE model trained for a few updates, and its int8 copy. Shared by the cases.
struct QuantizedModels {
  test::ScratchDir dir;
  std::string fp32, int8;
};
const QuantizedModels& quantized_models() {
  static const std::unique_ptr<QuantizedModels> m = [] {
    auto q = std::make_unique<QuantizedModels>();
    test::write_tiny_corpus(q->dir.path(), "train", 60, 5);
    test::write_tiny_corpus(q->dir.path(), "valid", 8, 6);
    const test::RunResult trained = test::run_attn(
        test::shell_words(test::tiny_train_args(q->dir.path(), "run", {"--arch", "muse", "--max-updates", "6"})));
    INFO(trained.err);
    REQUIRE(trained.status == 0);
    q->fp32 = (q->dir.path() / "run" / "best.attn").string();
    q->int8 = (q->dir.path() / "best.int8.attn").string();
    const test::RunResult r = test::run_attn("quantize " + q->fp32 + " -o " + q->int8);
    INFO(r.err);
    REQUIRE(r.status == 0);
    REQUIRE(r.err.find("of the parameters in int8") != std::string::npos);
    return q;
  }();
  return *m;
}

// A change to a file's tensors; new data it points them at lives in `keep`.
using TensorChange = std::function<void(std::vector<TensorRef>& tensors, std::vector<std::vector<float>>& keep)>;

// The int8 file rewritten with `change` applied to its tensors.
void rewrite(const std::string& from, const fs::path& to, const TensorChange& change) {
  const SafetensorsFile file = SafetensorsFile::read(from);
  std::vector<TensorRef> tensors;
  std::vector<std::vector<float>> keep;
  keep.reserve(64);
  for (const std::string& name : file.names()) {
    if (file.dtype(name) == DType::I8)
      tensors.push_back({name, file.shape(name), {}, DType::I8, file.int8(name)});
    else
      tensors.push_back({name, file.shape(name), file.data(name)});
  }
  change(tensors, keep);
  std::map<std::string, std::string> metadata = file.metadata();
  for (const char* reserved : {"format", "format_version", "crc32", "header_crc32"}) metadata.erase(reserved);
  write_safetensors(to, tensors, metadata);
}

}  // namespace

TEST_CASE(
    "quantize (cli): the int8 file is smaller, info says int8, translate and attend read it in every compute type",
    "[cli][int8][e2e]") {
  const QuantizedModels& m = quantized_models();
  REQUIRE(fs::file_size(m.int8) < fs::file_size(m.fp32));
  const test::RunResult info = test::run_attn("info " + m.int8);
  REQUIRE(info.status == 0);
  REQUIRE(info.out.find("weights     int8: ") != std::string::npos);
  REQUIRE(info.out.find("attn quantize of best.attn") != std::string::npos);
  const test::RunResult info_json = test::run_attn("info --json " + m.int8);
  REQUIRE(nlohmann::json::parse(info_json.out).at("weights") == "int8");
  REQUIRE(nlohmann::json::parse(test::run_attn("info --json " + m.fp32).out).at("weights") == "fp32");

  const std::string input = "ein hund läuft\neine katze\n";
  for (const char* type : {"fp32", "bf16", "int8"}) {
    INFO("compute type " << type);
    const test::RunResult t = test::run_attn("translate -m " + m.int8 + " --compute-type " + type, input);
    INFO(t.err);
    REQUIRE(t.status == 0);
    REQUIRE(std::count(t.out.begin(), t.out.end(), '\n') == 2);
  }
  test::ScratchDir dir;
  const std::string maps = (dir.path() / "maps.json").string();
  const test::RunResult attend =
      test::run_attn("attend -m " + m.int8 + " --compute-type int8 -o " + maps, "ein hund\n");
  INFO(attend.err);
  REQUIRE(attend.status == 0);
  REQUIRE(fs::file_size(maps) > 0);
}

TEST_CASE("quantize (cli): a missing or damaged input, the input as output, a damaged int8 file: one line, exit 2",
          "[cli][int8][e2e]") {
  const QuantizedModels& m = quantized_models();
  test::ScratchDir dir;
  const std::string out = (dir.path() / "out.attn").string();
  test::require_user_error(test::run_attn("quantize " + (dir.path() / "missing.attn").string() + " -o " + out),
                           "no such file");
  const auto before = fs::file_size(m.fp32);
  test::require_user_error(test::run_attn("quantize " + m.fp32 + " -o " + m.fp32), "is the same file as the model");
  REQUIRE(fs::file_size(m.fp32) == before);
  test::require_user_error(test::run_attn("quantize " + m.fp32), "--output");
  REQUIRE_FALSE(fs::exists(out));

  // Damaged int8 files, each read by translate: what is wrong, named.
  const auto damaged = [&](const std::string& name, const TensorChange& change) {
    const fs::path path = dir.path() / (name + ".attn");
    rewrite(m.int8, path, change);
    return test::run_attn("translate -m " + path.string(), "ein hund\n");
  };
  const auto find = [](std::vector<TensorRef>& t, const std::string& name) {
    return std::find_if(t.begin(), t.end(), [&](const TensorRef& r) { return r.name == name; });
  };
  test::require_user_error(damaged("no_scale", [&](auto& t, auto&) { t.erase(find(t, "embed.weight.scale")); }),
                           "int8 tensor 'embed.weight' has no 'embed.weight.scale'");
  test::require_user_error(damaged("negative_scale",
                                   [&](auto& t, auto& keep) {
                                     auto s = find(t, "embed.weight.scale");
                                     keep.emplace_back(s->data.begin(), s->data.end());
                                     keep.back()[3] = -1.0f;
                                     s->data = keep.back();
                                   }),
                           "'embed.weight' has a scale that is negative or not finite");
  test::require_user_error(damaged("int8_norm",
                                   [&](auto& t, auto&) {
                                     static const std::vector<std::int8_t> ones(16, 1);
                                     auto n = find(t, "enc.ln.weight");
                                     *n = TensorRef{n->name,
                                                    n->shape,
                                                    {},
                                                    DType::I8,
                                                    std::span(ones.data(), static_cast<std::size_t>(n->shape.numel()))};
                                   }),
                           "'enc.ln.weight': attn stores this parameter in FP32 only");
}
