// `attn export --to ctranslate2`: model.bin read back by a reader of this test's
// own (CTranslate2's format as python/ctranslate2/specs/model_spec.py writes
// it), every variable checked by name, shape, type and value against the
// model's parameters under TransformerSpec's names; config.json, the
// vocabulary and attn's BPE beside them; other archs and bad targets refused
// with nothing left behind. CTranslate2 itself is not needed (its decoding of
// an export is checked by bench/ctranslate2_build.sh's ct2_translate).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"
#include "tiny_model.h"

#include "attn/model/model_file.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// One variable of model.bin as the file has it.
struct Variable {
  std::vector<std::uint32_t> shape;
  std::uint8_t type = 255;
  std::string bytes;
};

struct ModelBin {
  std::uint32_t version = 0, revision = 0;
  std::string spec;
  std::map<std::string, Variable> variables;
  std::map<std::string, std::string> aliases;
  std::vector<std::string> order;  // variable names as written
};

class Reader {
 public:
  explicit Reader(std::string bytes) : bytes_(std::move(bytes)) {}
  template <typename T>
  T get() {
    REQUIRE(at_ + sizeof(T) <= bytes_.size());
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string raw(std::size_t n) {
    REQUIRE(at_ + n <= bytes_.size());
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::string string() {
    const auto n = get<std::uint16_t>();
    REQUIRE(n >= 1);
    std::string s = raw(n);
    REQUIRE(s.back() == '\0');
    s.pop_back();
    return s;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string bytes_;
  std::size_t at_ = 0;
};

ModelBin read_model_bin(const fs::path& path) {
  Reader r(test::slurp(path));
  ModelBin m;
  m.version = r.get<std::uint32_t>();
  m.spec = r.string();
  m.revision = r.get<std::uint32_t>();
  const auto count = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::string name = r.string();
    Variable v;
    const auto rank = r.get<std::uint8_t>();
    for (int d = 0; d < rank; ++d) v.shape.push_back(r.get<std::uint32_t>());
    v.type = r.get<std::uint8_t>();
    v.bytes = r.raw(r.get<std::uint32_t>());
    REQUIRE(m.variables.emplace(name, v).second);
    m.order.push_back(name);
  }
  const auto aliases = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < aliases; ++i) {
    const std::string alias = r.string();
    REQUIRE(m.aliases.emplace(alias, r.string()).second);
  }
  REQUIRE(r.done());
  return m;
}

// What a name must hold: FP32 values and shape, or a scalar of a type.
struct Expected {
  std::vector<std::uint32_t> shape;
  std::uint8_t type = 0;  // CTranslate2's DataType: 0 float32, 1 int8, 2 int16
  std::vector<float> floats;
  long long integer = 0;  // int8/int16 scalars
};

class Expectations {
 public:
  explicit Expectations(const nn::ParamStore& params) : params_(params) {}

  // The rows of the named parameters one after another.
  void rows(const std::string& name, std::initializer_list<std::string> from) {
    Expected e;
    std::uint32_t rows = 0, cols = 0;
    for (const std::string& p : from) {
      const nn::ParamId id = params_.find(p);
      INFO(p);
      REQUIRE(id >= 0);
      const Shape& s = params_.info(id).shape;
      rows += static_cast<std::uint32_t>(s[0]);
      cols = s.ndim() == 2 ? static_cast<std::uint32_t>(s[1]) : 0;
      e.floats.insert(e.floats.end(), params_.value(id), params_.value(id) + s.numel());
    }
    e.shape = {rows};
    if (cols) e.shape.push_back(cols);
    all[name] = e;
  }
  void linear(const std::string& to, const std::string& from) {
    rows(to + "/weight", {from + ".weight"});
    rows(to + "/bias", {from + ".bias"});
  }
  void norm(const std::string& to, const std::string& from) {
    rows(to + "/gamma", {from + ".weight"});
    rows(to + "/beta", {from + ".bias"});
  }
  void integer(const std::string& name, std::uint8_t type, long long value) { all[name] = {{}, type, {}, value}; }
  void real(const std::string& name, float value) { all[name] = {{}, 0, {value}, 0}; }

  std::map<std::string, Expected> all;

 private:
  const nn::ParamStore& params_;
};

// fairseq's sinusoid, positions from 0: sin in the first half, cos in the second.
std::vector<float> sinusoid(std::int64_t positions, std::int64_t d) {
  std::vector<float> t(static_cast<std::size_t>(positions * d));
  const std::int64_t half = d / 2;
  for (std::int64_t p = 0; p < positions; ++p)
    for (std::int64_t j = 0; j < half; ++j) {
      const double w = std::pow(10000.0, -static_cast<double>(j) / static_cast<double>(half - 1));
      t[p * d + j] = static_cast<float>(std::sin(static_cast<double>(p) * w));
      t[p * d + half + j] = static_cast<float>(std::cos(static_cast<double>(p) * w));
    }
  return t;
}

// TransformerSpec's names for this model, with what each must hold.
std::map<std::string, Expected> expected_variables(const model::Seq2Seq& m) {
  const model::ModelConfig& c = m.config();
  const bool pre = c.norm == model::Norm::pre;
  Expectations e(m.params());
  const std::string src = c.share_all_embeddings ? "embed.weight" : "src_embed.weight";
  const std::string tgt = c.share_all_embeddings ? "embed.weight" : "tgt_embed.weight";
  const std::string out = c.share_all_embeddings || c.share_decoder_output ? tgt : "out_proj.weight";
  e.rows("encoder/embeddings_0/weight", {src});
  e.rows("decoder/embeddings/weight", {tgt});
  e.rows("decoder/projection/weight", {out});
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string s = stack;
    e.integer(s + "/activation", 1, 0);  // ReLU
    e.integer(s + "/num_heads", 2, c.heads);
    e.integer(s + "/pre_norm", 1, pre ? 1 : 0);
    e.real(s + "/scale_embeddings", std::sqrt(static_cast<float>(c.dim)));
    e.all[s + "/position_encodings/encodings"] = {{static_cast<std::uint32_t>(c.max_positions),
                                                   static_cast<std::uint32_t>(c.dim)},
                                                  0,
                                                  sinusoid(c.max_positions, c.dim),
                                                  0};
    if (pre) e.norm(s + "/layer_norm", s == "encoder" ? "enc.ln" : "dec.ln");
  }
  e.integer("encoder/embeddings_merge", 1, 0);
  e.integer("encoder/multi_query_attention", 1, 0);
  e.integer("decoder/alibi", 1, 0);
  e.integer("decoder/alibi_use_positive_positions", 1, 0);
  e.integer("decoder/scale_alibi", 1, 0);
  e.integer("decoder/start_from_zero_embedding", 1, 0);
  e.integer("decoder/alignment_layer", 2, -1);
  e.integer("decoder/alignment_heads", 2, 1);
  for (std::int64_t i = 0; i < c.enc_layers; ++i) {
    const std::string to = "encoder/layer_" + std::to_string(i) + "/", at = "enc." + std::to_string(i) + ".";
    e.norm(to + "self_attention/layer_norm", at + "ln_attn");
    e.rows(to + "self_attention/linear_0/weight",
           {at + "self_attn.q.weight", at + "self_attn.k.weight", at + "self_attn.v.weight"});
    e.rows(to + "self_attention/linear_0/bias",
           {at + "self_attn.q.bias", at + "self_attn.k.bias", at + "self_attn.v.bias"});
    e.linear(to + "self_attention/linear_1", at + "self_attn.o");
    e.norm(to + "ffn/layer_norm", at + "ln_ffn");
    e.linear(to + "ffn/linear_0", at + "ffn.fc1");
    e.linear(to + "ffn/linear_1", at + "ffn.fc2");
  }
  for (std::int64_t i = 0; i < c.dec_layers; ++i) {
    const std::string to = "decoder/layer_" + std::to_string(i) + "/", at = "dec." + std::to_string(i) + ".";
    e.norm(to + "self_attention/layer_norm", at + "ln_self");
    e.rows(to + "self_attention/linear_0/weight",
           {at + "self_attn.q.weight", at + "self_attn.k.weight", at + "self_attn.v.weight"});
    e.rows(to + "self_attention/linear_0/bias",
           {at + "self_attn.q.bias", at + "self_attn.k.bias", at + "self_attn.v.bias"});
    e.linear(to + "self_attention/linear_1", at + "self_attn.o");
    e.norm(to + "attention/layer_norm", at + "ln_cross");
    e.linear(to + "attention/linear_0", at + "cross_attn.q");
    e.rows(to + "attention/linear_1/weight", {at + "cross_attn.k.weight", at + "cross_attn.v.weight"});
    e.rows(to + "attention/linear_1/bias", {at + "cross_attn.k.bias", at + "cross_attn.v.bias"});
    e.linear(to + "attention/linear_2", at + "cross_attn.o");
    e.norm(to + "ffn/layer_norm", at + "ln_ffn");
    e.linear(to + "ffn/linear_0", at + "ffn.fc1");
    e.linear(to + "ffn/linear_1", at + "ffn.fc2");
  }
  return e.all;
}

// Exports `model_file` into dir/ct2 and checks everything in it against the model.
void check_export(const test::ScratchDir& dir, const std::string& model_file) {
  const fs::path out = dir.path() / "ct2";
  const test::RunResult r = test::run_attn("export --to ctranslate2 " + model_file + " " + out.string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.find("for CTranslate2") != std::string::npos);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(out)) files.insert(entry.path().filename().string());
  REQUIRE(files == std::set<std::string>{"model.bin", "config.json", "shared_vocabulary.json", "attn_bpe.json"});

  const model::LoadedModel loaded = model::load_model_values(model_file);
  const ModelBin bin = read_model_bin(out / "model.bin");
  CHECK(bin.version == 6);
  CHECK(bin.spec == "TransformerSpec");
  CHECK(bin.revision == 7);
  CHECK(std::is_sorted(bin.order.begin(), bin.order.end()));

  const std::map<std::string, Expected> expected = expected_variables(*loaded.model);
  std::set<std::string> names;
  for (const auto& [name, v] : bin.variables) names.insert(name);
  for (const auto& [alias, target] : bin.aliases) {
    INFO("alias " << alias << " -> " << target);
    REQUIRE(bin.variables.count(target) == 1);
    REQUIRE(names.insert(alias).second);
  }
  std::set<std::string> expected_names;
  for (const auto& [name, e] : expected) expected_names.insert(name);
  REQUIRE(names == expected_names);

  for (const auto& [name, e] : expected) {
    INFO(name);
    const std::string& stored = bin.aliases.count(name) ? bin.aliases.at(name) : name;
    const Variable& v = bin.variables.at(stored);
    REQUIRE(v.shape == e.shape);
    REQUIRE(v.type == e.type);
    if (e.type == 1) {
      REQUIRE(v.bytes.size() == 1);
      CHECK(static_cast<std::int8_t>(v.bytes[0]) == e.integer);
    } else if (e.type == 2) {
      REQUIRE(v.bytes.size() == 2);
      std::int16_t value;
      std::memcpy(&value, v.bytes.data(), 2);
      CHECK(value == e.integer);
    } else {
      REQUIRE(v.bytes.size() == e.floats.size() * sizeof(float));
      std::vector<float> values(e.floats.size());
      std::memcpy(values.data(), v.bytes.data(), v.bytes.size());
      const bool table = name.find("position_encodings") != std::string::npos;
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < values.size(); ++i)
        wrong += table ? std::abs(values[i] - e.floats[i]) > 1e-6f : values[i] != e.floats[i];
      CHECK(wrong == 0);
    }
  }
  // One table stored once: shared parameters and the position table are aliases.
  const model::ModelConfig& c = loaded.model->config();
  CHECK(bin.aliases.count("encoder/position_encodings/encodings") == 1);
  CHECK(bin.aliases.count("encoder/embeddings_0/weight") == (c.share_all_embeddings ? 1u : 0u));
  CHECK(bin.aliases.count("decoder/projection/weight") == (c.share_all_embeddings || c.share_decoder_output ? 1u : 0u));

  const nlohmann::json config = nlohmann::json::parse(test::slurp(out / "config.json"));
  CHECK(config == nlohmann::json{{"add_source_bos", false},
                                 {"add_source_eos", false},
                                 {"bos_token", "<s>"},
                                 {"decoder_start_token", "<s>"},
                                 {"eos_token", "</s>"},
                                 {"layer_norm_epsilon", 1e-5},
                                 {"multi_query_attention", false},
                                 {"unk_token", "<unk>"}});
  const auto vocabulary =
      nlohmann::json::parse(test::slurp(out / "shared_vocabulary.json")).get<std::vector<std::string>>();
  REQUIRE(static_cast<std::int64_t>(vocabulary.size()) == c.vocab_size);
  CHECK(vocabulary == loaded.bpe.vocab().pieces());
  CHECK(std::vector<std::string>(vocabulary.begin(), vocabulary.begin() + 4) ==
        std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>"});
  const text::Bpe bpe = text::Bpe::from_json(nlohmann::json::parse(test::slurp(out / "attn_bpe.json")));
  CHECK(bpe.vocab().pieces() == loaded.bpe.vocab().pieces());
  CHECK(bpe.merges().size() == loaded.bpe.merges().size());
}

// The names in `dir` (what a failed export must not add to).
std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("export (cli): model.bin holds every TransformerSpec variable with the model's values, shared ones once",
          "[cli][export][e2e]") {
  const test::ScratchDir dir;
  check_export(dir, test::tiny_model(dir));
}

TEST_CASE("export (cli): post-norm, separate embeddings and other sizes map too", "[cli][export][e2e]") {
  const test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 60, 5);
  test::write_tiny_corpus(dir.path(), "valid", 5, 6);
  // The tiny model's flags with other layer counts and FFN size (a flag is taken once).
  std::vector<std::string> args =
      test::tiny_train_args(dir.path(), "run",
                            {"--enc-layers", "2", "--dec-layers", "3", "--norm", "post", "--no-share-all-embeddings",
                             "--no-share-embeddings", "--max-updates", "2"});
  const auto at = [&](const char* flag) { return std::find(args.begin(), args.end(), flag); };
  REQUIRE(at("--ffn-dim") != args.end());
  *(at("--ffn-dim") + 1) = "48";
  REQUIRE(at("--layers") != args.end());
  args.erase(at("--layers"), at("--layers") + 2);
  const test::RunResult trained = test::run_attn(test::shell_words(args));
  INFO(trained.err);
  REQUIRE(trained.status == 0);
  const std::string model_file = (dir.path() / "run" / "last.attn").string();
  const model::LoadedModel loaded = model::load_model_values(model_file);
  REQUIRE(loaded.model->config().enc_layers == 2);
  REQUIRE(loaded.model->config().dec_layers == 3);
  REQUIRE(loaded.model->config().ffn_dim == 48);
  REQUIRE(loaded.model->params().find("out_proj.weight") >= 0);
  check_export(dir, model_file);
}

TEST_CASE("export (cli): an int8 model file is written in FP32, dequantized", "[cli][export][e2e]") {
  const test::ScratchDir dir;
  const std::string fp32 = test::tiny_model(dir), int8 = (dir.path() / "int8.attn").string();
  REQUIRE(test::run_attn("quantize " + fp32 + " -o " + int8).status == 0);
  REQUIRE(model::load_model_values(int8).int8_params > 0);
  check_export(dir, int8);  // against the loaded (dequantized) values
  const test::RunResult again =
      test::run_attn("export --to ctranslate2 " + int8 + " " + (dir.path() / "again").string());
  CHECK(again.err.find("dequantized") != std::string::npos);
}

TEST_CASE("export (cli): other archs, bad targets and engines are one line, exit 2, nothing written",
          "[cli][export][e2e]") {
  const test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 60, 5);
  test::write_tiny_corpus(dir.path(), "valid", 5, 6);
  const test::RunResult trained = test::run_attn(
      test::shell_words(test::tiny_train_args(dir.path(), "muse", {"--arch", "muse", "--max-updates", "1"})));
  INFO(trained.err);
  REQUIRE(trained.status == 0);
  const std::string muse = (dir.path() / "muse" / "last.attn").string();
  const std::set<std::string> before = entries(dir.path());
  const std::string out = (dir.path() / "ct2").string();
  test::require_user_error(test::run_attn("export --to ctranslate2 " + muse + " " + out),
                           "ctranslate2 has no MUSE layer; only --arch transformer exports");
  CHECK(entries(dir.path()) == before);  // no directory, no temporary

  const std::string transformer = test::tiny_model(dir);
  const std::set<std::string> with_model = entries(dir.path());
  test::require_user_error(test::run_attn("export --to onnx " + transformer + " " + out), "--to");
  test::require_user_error(test::run_attn("export " + transformer + " " + out), "--to");
  test::require_user_error(test::run_attn("export --to ctranslate2 " + (dir.path() / "none.attn").string() + " " + out),
                           "none.attn");
  test::require_user_error(test::run_attn("export --to ctranslate2 " + transformer + " " +
                                          (dir.path() / "no" / "ct2").string()),
                           "does not exist");
  CHECK(entries(dir.path()) == with_model);
  // An existing directory with files in it stays as it was.
  fs::create_directory(out);
  dir.write("ct2/keep.txt", "mine");
  test::require_user_error(test::run_attn("export --to ctranslate2 " + transformer + " " + out),
                           "not an empty directory");
  CHECK(entries(out) == std::set<std::string>{"keep.txt"});
  // An empty one is filled.
  fs::remove(fs::path(out) / "keep.txt");
  REQUIRE(test::run_attn("export --to ctranslate2 " + transformer + " " + out).status == 0);
  CHECK(fs::exists(fs::path(out) / "model.bin"));
}
