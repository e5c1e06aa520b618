#include "attn/model/ctranslate2.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <span>
#include <system_error>

#include "attn/core/atomic_file.h"
#include "attn/core/error.h"
#include "attn/nn/embedding.h"
#include "attn/text/vocab.h"

namespace attn::model {

namespace {

// A variable before aliasing: `source` names what its values are (an attn
// parameter, the position table), so two names of one source become a
// variable and an alias, as CTranslate2's converters alias equal variables.
struct Pending {
  Ct2Variable variable;
  std::string source;
};

template <typename T>
std::vector<std::byte> bytes_of(std::span<const T> values) {
  std::vector<std::byte> bytes(values.size_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
Ct2Variable scalar(std::string name, Ct2Type type, T value) {
  return {std::move(name), {}, type, bytes_of(std::span<const T>(&value, 1))};
}

std::uint32_t dim32(std::int64_t n) {
  if (n < 0 || n > std::numeric_limits<std::uint32_t>::max())
    throw Error("a dimension of " + std::to_string(n) + " does not fit CTranslate2's model format");
  return static_cast<std::uint32_t>(n);
}

// Collects the variables, reading attn's parameters by name.
class Builder {
 public:
  explicit Builder(const nn::ParamStore& params) : params_(params) {}

  // The rows of attn's parameters `from`, one after another, as one variable:
  // [Σ rows, cols] for matrices, [Σ n] for vectors (Q, K and V as one projection).
  void rows(const std::string& name, const std::vector<std::string>& from) {
    std::vector<float> values;
    std::int64_t rows = 0, cols = -1;
    for (const std::string& param : from) {
      const nn::ParamId id = params_.find(param);
      if (id < 0) throw std::logic_error("ctranslate2 export: no parameter " + param);
      const Shape& shape = params_.info(id).shape;
      const std::int64_t c = shape.ndim() == 2 ? shape[1] : 0;
      if (cols >= 0 && c != cols) throw std::logic_error("ctranslate2 export: " + param + " does not stack");
      cols = c;
      rows += shape[0];
      const float* v = params_.value(id);
      values.insert(values.end(), v, v + shape.numel());
    }
    std::vector<std::uint32_t> shape{dim32(rows)};
    if (cols > 0) shape.push_back(dim32(cols));
    const std::string source = from.size() == 1 ? from[0] : "";
    pending_.push_back({{name, shape, Ct2Type::float32, bytes_of(std::span<const float>(values))}, source});
  }
  void linear(const std::string& scope, const std::vector<std::string>& from) {
    std::vector<std::string> weights, biases;
    for (const std::string& f : from) {
      weights.push_back(f + ".weight");
      biases.push_back(f + ".bias");
    }
    rows(scope + "/weight", weights);
    rows(scope + "/bias", biases);
  }
  void layer_norm(const std::string& scope, const std::string& from) {
    rows(scope + "/gamma", {from + ".weight"});
    rows(scope + "/beta", {from + ".bias"});
  }
  // The sublayers encoder and decoder layers share: self-attention (Q, K and V
  // as one projection) behind the norm `norm` of layer `from`, and the FFN.
  void self_attention(const std::string& to, const std::string& from, const std::string& norm) {
    layer_norm(to + "/self_attention/layer_norm", from + norm);
    linear(to + "/self_attention/linear_0", {from + ".self_attn.q", from + ".self_attn.k", from + ".self_attn.v"});
    linear(to + "/self_attention/linear_1", {from + ".self_attn.o"});
  }
  void ffn(const std::string& to, const std::string& from) {
    layer_norm(to + "/ffn/layer_norm", from + ".ln_ffn");
    linear(to + "/ffn/linear_0", {from + ".ffn.fc1"});
    linear(to + "/ffn/linear_1", {from + ".ffn.fc2"});
  }
  void table(const std::string& name, const Tensor& t, const std::string& source) {
    std::vector<std::uint32_t> shape;
    for (int i = 0; i < t.shape().ndim(); ++i) shape.push_back(dim32(t.shape()[i]));
    pending_.push_back({{name, shape, Ct2Type::float32,
                         bytes_of(std::span<const float>(t.data(), static_cast<std::size_t>(t.numel())))},
                        source});
  }
  void add(Ct2Variable v) { pending_.push_back({std::move(v), ""}); }

  // Sorted by name; of the names of one source, the first keeps the values.
  void finish(Ct2Model& m) {
    std::sort(pending_.begin(), pending_.end(),
              [](const Pending& a, const Pending& b) { return a.variable.name < b.variable.name; });
    std::map<std::string, std::string> first_of;
    for (Pending& p : pending_) {
      if (!p.source.empty()) {
        const auto [it, inserted] = first_of.emplace(p.source, p.variable.name);
        if (!inserted) {
          m.aliases.emplace_back(p.variable.name, it->second);
          continue;
        }
      }
      m.variables.push_back(std::move(p.variable));
    }
  }

 private:
  const nn::ParamStore& params_;
  std::vector<Pending> pending_;
};

// What CTranslate2's Transformer lacks in this model, or "".
std::string missing_layer(const Seq2Seq& model) {
  const std::map<std::string, std::string> names{{"muse", "MUSE"},
                                                 {"muse-simple", "MUSE"},
                                                 {"csan", "ConvSAN"},
                                                 {"csan2d", "ConvSAN 2D"},
                                                 {"fastdisa", "Fast-DiSA"}};
  for (const auto& kinds : {model.encoder_mixer_kinds(), model.decoder_mixer_kinds()})
    for (const std::string& kind : kinds)
      if (kind != "mha") return names.count(kind) ? names.at(kind) : kind;
  if (model.config().parallel_layers()) return "parallel (MUSE's attention beside the FFN)";
  return "";
}

void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + 4);
}
void put_string(std::vector<std::byte>& out, const std::string& s) {
  if (s.size() + 1 > std::numeric_limits<std::uint16_t>::max())
    throw Error("a name of " + std::to_string(s.size()) + " bytes does not fit CTranslate2's model format");
  const auto n = static_cast<std::uint16_t>(s.size() + 1);
  const auto* p = reinterpret_cast<const std::byte*>(&n);
  out.insert(out.end(), p, p + 2);
  const auto* c = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), c, c + s.size());
  out.push_back(std::byte{0});
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::strict) + "\n";
}

// Removes a temporary directory unless released.
struct TempDir {
  std::filesystem::path path;
  bool keep = false;
  ~TempDir() {
    if (keep || path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

Ct2Model ctranslate2_model(const Seq2Seq& model, const text::Vocab& vocab) {
  const ModelConfig& c = model.config();
  if (const std::string missing = missing_layer(model); !missing.empty())
    throw Error("ctranslate2 has no " + missing + " layer; only --arch transformer exports (this model is --arch " +
                c.arch + ")");
  if (vocab.size() != c.vocab_size)
    throw std::logic_error("ctranslate2 export: the vocabulary and the model disagree on its size");
  const bool pre = c.norm == Norm::pre;
  Builder b(model.params());
  const float embed_scale = std::sqrt(static_cast<float>(c.dim));  // as nn::Embedding scales
  const Tensor positions = nn::sinusoidal_positions(c.max_positions, c.dim);

  // Encoder.
  b.add(scalar<std::int8_t>("encoder/activation", Ct2Type::int8, 0));  // ReLU
  b.rows("encoder/embeddings_0/weight", {c.share_all_embeddings ? "embed.weight" : "src_embed.weight"});
  b.add(scalar<std::int8_t>("encoder/embeddings_merge", Ct2Type::int8, 0));
  b.add(scalar<std::int8_t>("encoder/multi_query_attention", Ct2Type::int8, 0));
  b.add(scalar<std::int16_t>("encoder/num_heads", Ct2Type::int16, static_cast<std::int16_t>(c.heads)));
  b.table("encoder/position_encodings/encodings", positions, "positions");
  b.add(scalar<std::int8_t>("encoder/pre_norm", Ct2Type::int8, pre ? 1 : 0));
  b.add(scalar<float>("encoder/scale_embeddings", Ct2Type::float32, embed_scale));
  if (pre) b.layer_norm("encoder/layer_norm", "enc.ln");
  for (std::int64_t i = 0; i < c.enc_layers; ++i) {
    const std::string to = "encoder/layer_" + std::to_string(i), from = "enc." + std::to_string(i);
    b.self_attention(to, from, ".ln_attn");
    b.ffn(to, from);
  }

  // Decoder.
  const std::string tgt_embed = c.share_all_embeddings ? "embed.weight" : "tgt_embed.weight";
  b.add(scalar<std::int8_t>("decoder/activation", Ct2Type::int8, 0));
  b.add(scalar<std::int8_t>("decoder/alibi", Ct2Type::int8, 0));
  b.add(scalar<std::int8_t>("decoder/alibi_use_positive_positions", Ct2Type::int8, 0));
  b.add(scalar<std::int16_t>("decoder/alignment_heads", Ct2Type::int16, 1));
  b.add(scalar<std::int16_t>("decoder/alignment_layer", Ct2Type::int16, -1));
  b.rows("decoder/embeddings/weight", {tgt_embed});
  b.add(scalar<std::int16_t>("decoder/num_heads", Ct2Type::int16, static_cast<std::int16_t>(c.heads)));
  b.table("decoder/position_encodings/encodings", positions, "positions");
  b.add(scalar<std::int8_t>("decoder/pre_norm", Ct2Type::int8, pre ? 1 : 0));
  b.rows("decoder/projection/weight",
         {c.share_all_embeddings || c.share_decoder_output ? tgt_embed : std::string("out_proj.weight")});
  b.add(scalar<std::int8_t>("decoder/scale_alibi", Ct2Type::int8, 0));
  b.add(scalar<float>("decoder/scale_embeddings", Ct2Type::float32, embed_scale));
  b.add(scalar<std::int8_t>("decoder/start_from_zero_embedding", Ct2Type::int8, 0));
  if (pre) b.layer_norm("decoder/layer_norm", "dec.ln");
  for (std::int64_t i = 0; i < c.dec_layers; ++i) {
    const std::string to = "decoder/layer_" + std::to_string(i), from = "dec." + std::to_string(i);
    b.self_attention(to, from, ".ln_self");
    b.layer_norm(to + "/attention/layer_norm", from + ".ln_cross");
    b.linear(to + "/attention/linear_0", {from + ".cross_attn.q"});
    b.linear(to + "/attention/linear_1", {from + ".cross_attn.k", from + ".cross_attn.v"});
    b.linear(to + "/attention/linear_2", {from + ".cross_attn.o"});
    b.ffn(to, from);
  }

  Ct2Model m;
  b.finish(m);
  m.config = {{"add_source_bos", false},
              {"add_source_eos", false},
              {"bos_token", vocab.piece(text::kBos)},
              {"decoder_start_token", vocab.piece(text::kBos)},
              {"eos_token", vocab.piece(text::kEos)},
              {"layer_norm_epsilon", 1e-5},  // nn::LayerNorm's
              {"multi_query_attention", false},
              {"unk_token", vocab.piece(text::kUnk)}};
  m.vocabulary = vocab.pieces();
  return m;
}

std::vector<std::byte> ctranslate2_model_bin(const Ct2Model& m) {
  // python/ctranslate2/specs/model_spec.py, ModelSpec._serialize: little-endian
  // u32 version, string spec name, u32 revision, u32 count, then per variable
  // string name, u8 rank, u32 dims, u8 type, u32 byte count, bytes; then u32
  // alias count and (alias, name) string pairs. A string is u16 length + 1,
  // its bytes and a NUL.
  std::vector<std::byte> out;
  put_u32(out, kCt2BinaryVersion);
  put_string(out, kCt2SpecName);
  put_u32(out, kCt2SpecRevision);
  put_u32(out, static_cast<std::uint32_t>(m.variables.size()));
  for (const Ct2Variable& v : m.variables) {
    put_string(out, v.name);
    out.push_back(static_cast<std::byte>(v.shape.size()));
    for (std::uint32_t d : v.shape) put_u32(out, d);
    out.push_back(static_cast<std::byte>(v.type));
    if (v.bytes.size() > std::numeric_limits<std::uint32_t>::max())
      throw Error(v.name + " holds more than 4 GiB, which CTranslate2's model format cannot store");
    put_u32(out, static_cast<std::uint32_t>(v.bytes.size()));
    out.insert(out.end(), v.bytes.begin(), v.bytes.end());
  }
  put_u32(out, static_cast<std::uint32_t>(m.aliases.size()));
  for (const auto& [alias, name] : m.aliases) {
    put_string(out, alias);
    put_string(out, name);
  }
  return out;
}

void export_ctranslate2(const Seq2Seq& model, const text::Bpe& bpe, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const Ct2Model m = ctranslate2_model(model, bpe.vocab());  // refuses another arch before touching the disk

  std::error_code ec;
  const fs::path target = fs::absolute(dir).lexically_normal();
  const fs::path name = target.filename().empty() ? target.parent_path().filename() : target.filename();
  const fs::path parent = (target.filename().empty() ? target.parent_path() : target).parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error("cannot export into " + dir.string() + ": its parent directory " + parent.string() +
                " does not exist; create it first");
  if (fs::exists(fs::symlink_status(target, ec))) {
    if (!fs::is_directory(fs::symlink_status(target, ec)) || !fs::is_empty(target, ec))
      throw Error(dir.string() +
                  " exists and is not an empty directory; name a new directory for the CTranslate2 model");
  }

  TempDir temp{parent / ("." + name.string() + ".tmp-" + std::to_string(::getpid()))};
  fs::remove_all(temp.path, ec);
  if (!fs::create_directory(temp.path, ec))
    throw Error("cannot create a directory in " + parent.string() + ": " + ec.message());
  const std::vector<std::byte> bin = ctranslate2_model_bin(m);
  const std::pair<std::string, std::string> texts[] = {{"config.json", json_text(m.config)},
                                                       {"shared_vocabulary.json", json_text(m.vocabulary)},
                                                       {"attn_bpe.json", bpe.to_json().dump() + "\n"}};
  {
    AtomicFile out(temp.path / "model.bin");
    out.write(std::span<const std::byte>(bin));
    out.commit();
  }
  for (const auto& [file, text] : texts) {
    AtomicFile out(temp.path / file);
    out.write(text);
    out.commit();
  }
  // An empty directory under the final name is replaced by the rename.
  fs::rename(temp.path, target, ec);
  if (ec) throw Error("cannot rename the export to " + dir.string() + ": " + ec.message());
  temp.keep = true;
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

}  // namespace attn::model
