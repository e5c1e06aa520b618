// attn attend's library (decode/maps.h): rounding that keeps row sums; maps
// equal to an independent double-precision forward; beam maps equal forced
// maps on the beam's output; every arch's JSON against the schema and the
// document's promises; selection; bounded memory when streaming; the page.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (a known GCC 12 false positive;
// GCC bug 105651 and relatives); nothing here indexes an array out of bounds.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/core/error.h"
#include "attn/decode/maps.h"
#include "attn/decode/maps_page.h"
#include "attn/decode/search.h"
#include "json_schema.h"
#include "maps_checks.h"
#include "small_maps_config.h"

using namespace attn;
using nlohmann::json;
using decode::MapComponent;

namespace {

model::ModelConfig small_config(const std::string& arch = "transformer", const std::string& norm = "pre") {
  model::ModelConfig c = test::small_maps_config(arch, static_cast<std::int64_t>(text::Bpe().vocab().size()));
  c.norm = *model::parse_norm(norm);
  c.max_positions = 64;
  c.options["muse_tap_dropout"] = 0.0f;
  c.options["csan_window"] = 3;
  return c;
}

// Random weights with every bias and norm away from its initial value, scaled
// so that the distributions are peaked and searches differ.
void randomize(model::Seq2Seq& m, std::uint64_t seed, float scale = 1.0f) {
  Rng init(seed);
  m.initialize(init);
  const std::vector<float> noise = test::random_vector(m.params().values().size(), seed + 1, -0.2f, 0.2f);
  std::size_t i = 0;
  for (float& v : m.params().values()) v = scale * (v + noise[i++]);
}

std::filesystem::path schema_path() {
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "docs" / "attention.schema.json";
}

// A whole document written by MapsJsonWriter, as text.
std::string document_text(const json& header, const std::vector<std::string>& sentences, bool jsonl) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  REQUIRE(f != nullptr);
  decode::MapsJsonWriter writer(f, header, jsonl);
  for (const std::string& s : sentences) writer.add(s);
  writer.finish();
  std::fclose(f);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// Runs attend over lines (forced when targets are given) and returns the sentences' JSON texts.
std::vector<std::string> attend_lines(const model::Seq2Seq& m, const text::Bpe& bpe,
                                      const std::vector<std::string>& lines,
                                      const std::vector<std::string>* target_lines, const decode::SearchOptions& search,
                                      const decode::MapsSelection& selection, std::int64_t chunk = 3) {
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (const auto& l : lines) sources.push_back(bpe.encode(l));
  if (target_lines)
    for (const auto& l : *target_lines) targets.push_back(bpe.encode(l));
  decode::AttendInput input;
  input.source_lines = &lines;
  input.sources = &sources;
  if (target_lines) {
    input.target_lines = target_lines;
    input.targets = &targets;
  }
  input.chunk = chunk;
  Arena arena;
  Rng rng(0);
  nn::StepContext ctx{const_cast<model::Seq2Seq&>(m).params(), arena, rng, false};
  std::vector<std::string> out;
  decode::run_attend(ctx, m, bpe, input, search, selection, [&](std::int64_t index, const std::string& s) {
    REQUIRE(index == static_cast<std::int64_t>(out.size()));  // in input order
    out.push_back(s);
  });
  return out;
}

// ---- an independent double-precision forward of the Transformer, from the parameters ----
struct Reference {
  const model::Seq2Seq& m;
  std::int64_t d, H, dh;
  bool pre;
  using Mat = std::vector<double>;  // row-major

  explicit Reference(const model::Seq2Seq& model)
      : m(model), d(model.config().dim), H(model.config().heads), dh(d / H),
        pre(model.config().norm == model::Norm::pre) {}

  Mat param(const std::string& name) const {
    const nn::ParamId id = m.params().find(name);
    REQUIRE(id >= 0);
    const float* v = m.params().value(id);
    return Mat(v, v + m.params().info(id).shape.numel());
  }
  Mat embed(const std::vector<std::int32_t>& ids) const {
    const Mat table = param("embed.weight");
    const auto T = static_cast<std::int64_t>(ids.size());
    Mat x(static_cast<std::size_t>(T * d));
    const std::int64_t half = d / 2;
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < d; ++c) {
        const std::int64_t j = c < half ? c : c - half;
        const double angle = static_cast<double>(t) *
                             std::pow(10000.0, -static_cast<double>(j) / static_cast<double>(half - 1));
        x[t * d + c] = std::sqrt(static_cast<double>(d)) * table[ids[t] * d + c] +
                       (c < half ? std::sin(angle) : std::cos(angle));
      }
    return x;
  }
  Mat layer_norm(const Mat& x, const std::string& name) const {
    const Mat g = param(name + ".weight"), b = param(name + ".bias");
    Mat y(x.size());
    for (std::size_t r = 0; r < x.size() / d; ++r) {
      double mean = 0, var = 0;
      for (std::int64_t c = 0; c < d; ++c) mean += x[r * d + c];
      mean /= d;
      for (std::int64_t c = 0; c < d; ++c) var += (x[r * d + c] - mean) * (x[r * d + c] - mean);
      var /= d;
      for (std::int64_t c = 0; c < d; ++c) y[r * d + c] = (x[r * d + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
    }
    return y;
  }
  Mat linear(const Mat& x, std::int64_t in, std::int64_t out, const std::string& name) const {
    const Mat w = param(name + ".weight"), b = param(name + ".bias");
    const std::size_t rows = x.size() / in;
    Mat y(rows * out);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::int64_t o = 0; o < out; ++o) {
        double acc = b[o];
        for (std::int64_t i = 0; i < in; ++i) acc += x[r * in + i] * w[o * in + i];
        y[r * out + o] = acc;
      }
    return y;
  }
  // softmax(q kᵀ / √d_h) per head; probs [H, Tq, Tk].
  Mat attention(const Mat& xq, const Mat& xkv, const std::string& name, bool causal, Mat& probs) const {
    const Mat q = linear(xq, d, d, name + ".q"), k = linear(xkv, d, d, name + ".k"), v = linear(xkv, d, d, name + ".v");
    const std::int64_t tq = static_cast<std::int64_t>(xq.size()) / d, tk = static_cast<std::int64_t>(xkv.size()) / d;
    probs.assign(static_cast<std::size_t>(H * tq * tk), 0.0);
    Mat context(static_cast<std::size_t>(tq * d), 0.0);
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < tq; ++i) {
        double* p = probs.data() + (h * tq + i) * tk;
        double mx = -1e300;
        const std::int64_t keys = causal ? i + 1 : tk;
        for (std::int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (std::int64_t c = 0; c < dh; ++c) dot += q[i * d + h * dh + c] * k[j * d + h * dh + c];
          p[j] = dot / std::sqrt(static_cast<double>(dh));
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (std::int64_t j = 0; j < keys; ++j) sum += (p[j] = std::exp(p[j] - mx));
        for (std::int64_t j = 0; j < keys; ++j) {
          p[j] /= sum;
          for (std::int64_t c = 0; c < dh; ++c) context[i * d + h * dh + c] += p[j] * v[j * d + h * dh + c];
        }
      }
    return linear(context, d, d, name + ".o");
  }
  Mat ffn(const Mat& x, const std::string& name) const {
    const std::int64_t f = m.config().ffn_dim;
    Mat h = linear(x, d, f, name + ".fc1");
    for (double& v : h) v = std::max(0.0, v);
    return linear(h, f, d, name + ".fc2");
  }
  static Mat add(Mat a, const Mat& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
  }
  // One residual block, pre- or post-norm.
  template <typename F>
  Mat block(const Mat& x, const std::string& ln, F sublayer) const {
    return pre ? add(x, sublayer(layer_norm(x, ln))) : layer_norm(add(x, sublayer(x)), ln);
  }

  struct Result {
    std::vector<Mat> encoder, decoder, cross;  // [layers] of [H, from, to]
    double logprob = 0;
  };
  Result run(const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& tgt) const {
    Result r;
    Mat x = embed(src);
    for (std::int64_t l = 0; l < m.config().enc_layers; ++l) {
      const std::string n = "enc." + std::to_string(l);
      Mat p;
      x = block(x, n + ".ln_attn", [&](const Mat& h) { return attention(h, h, n + ".self_attn", false, p); });
      r.encoder.push_back(p);
      x = block(x, n + ".ln_ffn", [&](const Mat& h) { return ffn(h, n + ".ffn"); });
    }
    const Mat memory = pre ? layer_norm(x, "enc.ln") : x;
    std::vector<std::int32_t> in{text::kBos}, out = tgt;
    in.insert(in.end(), tgt.begin(), tgt.end());
    out.push_back(text::kEos);
    Mat y = embed(in);
    for (std::int64_t l = 0; l < m.config().dec_layers; ++l) {
      const std::string n = "dec." + std::to_string(l);
      Mat p, c;
      y = block(y, n + ".ln_self", [&](const Mat& h) { return attention(h, h, n + ".self_attn", true, p); });
      y = block(y, n + ".ln_cross", [&](const Mat& h) { return attention(h, memory, n + ".cross_attn", false, c); });
      y = block(y, n + ".ln_ffn", [&](const Mat& h) { return ffn(h, n + ".ffn"); });
      r.decoder.push_back(p);
      r.cross.push_back(c);
    }
    if (pre) y = layer_norm(y, "dec.ln");
    const Mat table = param("embed.weight");
    const std::int64_t V = m.config().vocab_size;
    for (std::size_t t = 0; t < out.size(); ++t) {
      std::vector<double> logits(static_cast<std::size_t>(V));
      double mx = -1e300;
      for (std::int64_t w = 0; w < V; ++w) {
        double acc = 0;
        for (std::int64_t c = 0; c < d; ++c) acc += y[t * d + c] * table[w * d + c];
        mx = std::max(mx, logits[w] = acc);
      }
      double sum = 0;
      for (double v : logits) sum += std::exp(v - mx);
      r.logprob += logits[out[t]] - mx - std::log(sum);
    }
    return r;
  }
};

void require_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  INFO("largest difference " << worst);
  REQUIRE(worst <= tol);
}

// Every number in two JSON values equal within tol (same structure otherwise).
void require_json_close(const json& a, const json& b, double tol) {
  if (a.is_number() && b.is_number()) {
    REQUIRE(std::abs(a.get<double>() - b.get<double>()) <= tol);
    return;
  }
  REQUIRE(a.type() == b.type());
  if (a.is_array() || a.is_object()) {
    REQUIRE(a.size() == b.size());
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) require_json_close(*i, *j, tol);
  } else {
    REQUIRE(a == b);
  }
}

struct ArchVariant {
  const char* arch;
  const char* decoder_mixer;
  const char* csan_head_boundary = "drop";  // 2D ConvSAN: "wrap" writes head_policy "wrap"
};
constexpr ArchVariant kArchs[] = {{"transformer", ""},       {"convsan", ""},         {"convsan2d", ""},
                                  {"convsan2d", "", "wrap"}, {"fastdisa", ""},        {"muse", ""},
                                  {"muse-simple", ""},       {"transformer", "csan"}, {"transformer", "fastdisa"},
                                  {"transformer", "muse"}};

model::ModelConfig variant_config(const ArchVariant& v) {
  model::ModelConfig config = small_config(v.arch);
  config.decoder_mixer = v.decoder_mixer;
  config.options["csan_head_boundary"] = v.csan_head_boundary;
  return config;
}

const std::vector<std::string> kLines{"ab cd", "x", "", "hello there, world", "tiny"};
const std::vector<std::string> kTargets{"ba", "yz", "q", "bonjour", ""};

}  // namespace

TEST_CASE("attend: rounding keeps every row's sum and leaves zeros at 0", "[attend]") {
  for (int precision : {1, 2, 4, 6}) {
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      const std::size_t n = 1 + seed % 23;
      std::vector<float> row = test::random_vector(n, seed, 0.0f, 1.0f);
      for (std::size_t i = 0; i < n; i += 3) row[i] = 0.0f;  // masked cells
      double sum = 0;
      for (float v : row) sum += v;
      if (sum > 0)
        for (float& v : row) v = static_cast<float>(v / sum);
      std::vector<std::int64_t> units(n);
      decode::round_preserving_sum(row.data(), static_cast<std::int64_t>(n), precision, units.data());
      const double scale = std::pow(10.0, precision);
      std::int64_t total = 0;
      for (std::size_t i = 0; i < n; ++i) {
        INFO("precision " << precision << " seed " << seed << " i " << i);
        if (row[i] == 0.0f) REQUIRE(units[i] == 0);
        REQUIRE(units[i] >= static_cast<std::int64_t>(std::floor(row[i] * scale)));
        REQUIRE(units[i] <= static_cast<std::int64_t>(std::ceil(row[i] * scale)));
        total += units[i];
      }
      REQUIRE(total == (sum > 0 ? static_cast<std::int64_t>(scale) : 0));
    }
  }
  // Twenty weights of 0.05 at one decimal: rounding each to nearest would give 2.0.
  std::vector<float> flat(20, 0.05f);
  std::vector<std::int64_t> units(20);
  decode::round_preserving_sum(flat.data(), 20, 1, units.data());
  std::int64_t total = 0;
  for (std::int64_t u : units) {
    REQUIRE((u == 0 || u == 1));
    total += u;
  }
  REQUIRE(total == 10);
}

TEST_CASE("attend: the maps are the weights of an independent double-precision forward", "[attend]") {
  for (const char* norm : {"pre", "post"}) {
    INFO("norm " << norm);
    model::ModelConfig config = small_config("transformer", norm);
    config.heads = 2;
    model::Seq2Seq m(config);
    randomize(m, 11);
    const std::vector<std::vector<std::int32_t>> sources{{70, 80, 90, 100, 110}, {71, 72}, {99}};
    const std::vector<std::vector<std::int32_t>> targets{{120, 121, 122}, {}, {130, 131, 132, 133, 134, 135}};
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    const auto got = decode::attend_chunk(ctx, m, sources, &targets, decode::SearchOptions{});
    const Reference ref(m);
    for (std::size_t b = 0; b < sources.size(); ++b) {
      INFO("sentence " << b);
      const Reference::Result want = ref.run(sources[b], targets[b]);
      REQUIRE(got[b].maps.src_len == static_cast<std::int64_t>(sources[b].size()));
      REQUIRE(got[b].maps.tgt_len == static_cast<std::int64_t>(targets[b].size() + 1));
      for (std::size_t l = 0; l < 2; ++l) {
        INFO("layer " << l);
        require_close(got[b].maps.encoder[l].weights, want.encoder[l], 1e-5);
        require_close(got[b].maps.decoder[l].weights, want.decoder[l], 1e-5);
        require_close(got[b].maps.cross[l], want.cross[l], 1e-5);
      }
      REQUIRE(*got[b].logprob == Approx(want.logprob).margin(1e-4));
      REQUIRE(*got[b].score == Approx(want.logprob / static_cast<double>(targets[b].size() + 1)).margin(1e-4));
    }
  }
}

// Search mode draws its maps with the forced pass over the search's output (by design, so the
// map loops below guard that design); what can differ is the output and the scores: attend must
// pick translate's best hypothesis, and the search's scores (incremental decoding) must agree
// with the forced pass's (the full forward).
TEST_CASE("attend: search mode maps translate's best output, its scores agree with the forced pass", "[attend]") {
  for (const ArchVariant& v : {kArchs[0], kArchs[2], kArchs[4], kArchs[5]}) {
    const model::ModelConfig config = variant_config(v);
    INFO("arch " << v.arch);
    model::Seq2Seq m(config);
    randomize(m, 21, 3.0f);
    const std::vector<std::vector<std::int32_t>> sources{{70, 80, 90, 100, 110}, {71, 72}, {99, 98, 97}};
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    for (int beam : {1, 3}) {
      INFO("beam " << beam);
      decode::SearchOptions search;
      search.beam = beam;
      search.max_len_a = 1.0f;
      search.max_len_b = 3.0f;
      const auto searched = decode::attend_chunk(ctx, m, sources, nullptr, search);
      std::vector<std::vector<std::int32_t>> outputs;
      std::size_t produced = 0;
      for (const auto& s : searched) {
        outputs.push_back(s.target);
        produced += s.target.size();
      }
      REQUIRE(produced >= 3);  // the comparison means something
      const auto forced = decode::attend_chunk(ctx, m, sources, &outputs, search);
      const auto translated = decode::beam_search(ctx, m, sources, search);
      for (std::size_t b = 0; b < sources.size(); ++b) {
        REQUIRE(searched[b].target == translated[b].at(0).tokens);
        const model::SentenceMaps &x = searched[b].maps, &y = forced[b].maps;
        REQUIRE(static_cast<std::int64_t>(x.encoder.size()) == config.enc_layers);
        REQUIRE(static_cast<std::int64_t>(x.decoder.size()) == config.dec_layers);
        REQUIRE(x.cross.size() == x.decoder.size());
        for (std::size_t l = 0; l < x.encoder.size(); ++l) {
          REQUIRE(x.encoder[l].weights == y.encoder[l].weights);
          REQUIRE(x.encoder[l].extras == y.encoder[l].extras);
        }
        for (std::size_t l = 0; l < x.decoder.size(); ++l) {
          REQUIRE(x.decoder[l].weights == y.decoder[l].weights);
          REQUIRE(x.decoder[l].extras == y.decoder[l].extras);
          REQUIRE(x.cross[l] == y.cross[l]);
        }
        // The search's score came from incremental decoding; the forced one from the full forward.
        REQUIRE(*forced[b].logprob == Approx(*searched[b].logprob).margin(1e-4));
        REQUIRE(*forced[b].score == Approx(*searched[b].score).margin(1e-4));
      }
    }
  }
}

TEST_CASE("attend: a sentence's maps are the same alone and in a padded chunk, for every arch", "[attend]") {
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchs) {
    INFO("arch " << v.arch << " decoder " << v.decoder_mixer << " heads " << v.csan_head_boundary);
    const model::ModelConfig config = variant_config(v);
    model::Seq2Seq m(config);
    randomize(m, 31);
    decode::MapsSelection selection;
    const auto together = attend_lines(m, bpe, kLines, &kTargets, {}, selection, 5);
    const auto alone = attend_lines(m, bpe, kLines, &kTargets, {}, selection, 1);
    for (std::size_t i = 0; i < kLines.size(); ++i)
      require_json_close(json::parse(together[i]), json::parse(alone[i]), 2e-4);
  }
}

TEST_CASE("attend: every arch's JSON validates against the schema and keeps the document's promises", "[attend]") {
  const auto validator = test::SchemaValidator::from_file(schema_path());
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchs) {
    for (const char* mode : {"greedy", "beam", "forced"}) {
      INFO("arch " << v.arch << " decoder " << v.decoder_mixer << " heads " << v.csan_head_boundary << ", " << mode);
      const model::ModelConfig config = variant_config(v);
      model::Seq2Seq m(config);
      randomize(m, 41, 2.0f);
      decode::SearchOptions search;
      search.beam = std::string(mode) == "beam" ? 3 : 1;
      search.max_len_a = 1.0f;
      search.max_len_b = 4.0f;
      decode::MapsSelection selection;
      selection.precision = 3;
      const bool forced = std::string(mode) == "forced";
      const auto sentences = attend_lines(m, bpe, kLines, forced ? &kTargets : nullptr, search, selection);
      const json header = decode::maps_header(m, "model.attn", forced, search, selection);
      const json doc = json::parse(document_text(header, sentences, false));
      const auto errors = validator.validate(doc);
      INFO((errors.empty() ? std::string() : errors.front()));
      REQUIRE(errors.empty());
      REQUIRE(doc["mode"] == mode);
      REQUIRE(doc["sentences"].size() == kLines.size());
      test::check_maps_document(doc);
      for (std::size_t i = 0; i < kLines.size(); ++i) {
        const json& s = doc["sentences"][i];
        REQUIRE(s["index"] == i);
        REQUIRE(s["source"] == kLines[i]);
        REQUIRE(s["source_tokens"].size() == bpe.encode(kLines[i]).size());
        if (forced) {
          REQUIRE(s["translation"] == kTargets[i]);
          if (!kLines[i].empty()) REQUIRE(s["target_tokens"].size() == bpe.encode(kTargets[i]).size() + 1);
        }
        REQUIRE(s["score"].is_null() == kLines[i].empty());
        REQUIRE(s["components"].size() == (kLines[i].empty() ? 0 : 3));  // an empty source has no maps
        if (!kLines[i].empty())
          for (const char* c : {"encoder", "decoder", "cross"}) REQUIRE(s["components"][c]["layers"].size() == 2);
      }
      // The mechanisms named are the model's.
      const json& s0 = doc["sentences"][0]["components"];
      for (std::size_t l = 0; l < 2; ++l) {
        REQUIRE(s0["encoder"]["layers"][l]["mechanism"] == m.encoder_mixer_kinds()[l]);
        REQUIRE(s0["decoder"]["layers"][l]["mechanism"] == m.decoder_mixer_kinds()[l]);
      }
      if (std::string(v.arch) == "convsan2d")
        REQUIRE(s0["encoder"]["layers"][0]["extras"]["head_policy"] ==
                (std::string(v.csan_head_boundary) == "wrap" ? "wrap" : "truncate"));
    }
  }
}

TEST_CASE("attend: the schema check can fail", "[attend]") {
  const auto validator = test::SchemaValidator::from_file(schema_path());
  const text::Bpe bpe;
  model::ModelConfig config = small_config("convsan2d");
  model::Seq2Seq m(config);
  randomize(m, 51);
  decode::MapsSelection selection;
  const auto sentences = attend_lines(m, bpe, {"ab cd"}, nullptr, {}, selection);
  const json good = json::parse(document_text(decode::maps_header(m, "m", false, {}, selection), sentences, false));
  REQUIRE(validator.validate(good).empty());
  auto broken = [&](auto change) {
    json doc = good;
    change(doc);
    return !validator.validate(doc).empty();
  };
  REQUIRE(good["sentences"][0]["components"]["encoder"]["layers"][0]["mechanism"] == "csan2d");
  REQUIRE(broken([](json& d) { d.erase("version"); }));
  REQUIRE(broken([](json& d) { d["version"] = 2; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0].erase("weights"); }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["weights"][0][0][0] = 1.5; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["weights"][0][0][0] = "0.5"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["mechanism"] = "lstm"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["encoder"]["layers"][0]["extras"].erase("window"); }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["cross"]["from"] = "source"; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["components"]["decoder"]["layers"][0]["extras"]["gate"] = 1; }));
  REQUIRE(broken([](json& d) { d["sentences"][0]["score"] = "high"; }));
}

TEST_CASE("attend: --layers, --heads and --components choose what is written", "[attend]") {
  const text::Bpe bpe;
  model::ModelConfig config = small_config("fastdisa");
  model::Seq2Seq m(config);
  randomize(m, 61);
  decode::MapsSelection all, some;
  some.components = decode::parse_components("cross, encoder");
  some.layers = decode::parse_indices("1", "--layers");
  some.heads = decode::parse_indices("3,1", "--heads");
  decode::check_selection(some, config);
  const json full = json::parse(attend_lines(m, bpe, {"hello"}, nullptr, {}, all)[0])["components"];
  const json part = json::parse(attend_lines(m, bpe, {"hello"}, nullptr, {}, some)[0])["components"];
  REQUIRE(part.size() == 2);
  REQUIRE_FALSE(part.contains("decoder"));
  for (const char* c : {"encoder", "cross"}) {
    REQUIRE(part[c]["heads"] == json::array({1, 3}));
    REQUIRE(part[c]["layers"].size() == 1);
    const json& p = part[c]["layers"][0];
    const json& f = full[c]["layers"][1];
    REQUIRE(p["layer"] == 1);
    REQUIRE(p["weights"] == json::array({f["weights"][1], f["weights"][3]}));
  }
  const json& pe = part["encoder"]["layers"][0]["extras"];
  const json& fe = full["encoder"]["layers"][1]["extras"];
  REQUIRE(pe["directions"] == json::array({fe["directions"][1], fe["directions"][3]}));
  REQUIRE(pe["fusion_gate"] == json::array({fe["fusion_gate"][1], fe["fusion_gate"][3]}));
}

TEST_CASE("attend: bad --layers, --heads, --components and --precision name the flag", "[attend]") {
  REQUIRE(decode::parse_indices("all", "--layers").empty());
  REQUIRE(decode::parse_indices("2, 0,1-2", "--layers") == std::vector<std::int64_t>{0, 1, 2});
  REQUIRE(decode::parse_components("all").size() == 3);
  REQUIRE(decode::parse_components("cross,decoder") ==
          std::vector<MapComponent>{MapComponent::decoder, MapComponent::cross});
  REQUIRE_THROWS_WITH(decode::parse_indices("0,x", "--layers"), Catch::Contains("--layers") && Catch::Contains("'x'"));
  REQUIRE_THROWS_WITH(decode::parse_indices("-1", "--heads"), Catch::Contains("--heads"));
  REQUIRE_THROWS_WITH(decode::parse_indices("3-1", "--layers"), Catch::Contains("backwards"));
  REQUIRE_THROWS_WITH(decode::parse_indices("", "--heads"), Catch::Contains("--heads"));
  REQUIRE_THROWS_WITH(decode::parse_components("encoder,self"),
                      Catch::Contains("--components") && Catch::Contains("'self'"));
  model::ModelConfig config = small_config();
  config.enc_layers = 3;
  decode::MapsSelection s;
  s.heads = {4};
  REQUIRE_THROWS_WITH(decode::check_selection(s, config), Catch::Contains("--heads") && Catch::Contains("4 heads"));
  s = {};
  s.layers = {2};  // the encoder has it, the decoder does not
  REQUIRE_THROWS_WITH(decode::check_selection(s, config),
                      Catch::Contains("--layers") && Catch::Contains("decoder has 2"));
  s.components = {MapComponent::encoder};
  REQUIRE_NOTHROW(decode::check_selection(s, config));
  s.precision = 0;
  REQUIRE_THROWS_WITH(decode::check_selection(s, config), Catch::Contains("--precision"));
}

TEST_CASE("attend: streaming holds one chunk: memory does not grow with the number of sentences", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("muse"));
  randomize(m, 71);
  const auto validator = test::SchemaValidator::from_file(schema_path());
  decode::SearchOptions search;
  search.max_len_b = 3.0f;
  auto peak = [&](std::size_t n, std::vector<std::string>& out) {
    const std::vector<std::string> lines(n, "a few words");
    std::vector<std::vector<std::int32_t>> sources;
    for (const auto& l : lines) sources.push_back(bpe.encode(l));
    decode::AttendInput input;
    input.source_lines = &lines;
    input.sources = &sources;
    input.chunk = 2;
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    decode::run_attend(ctx, m, bpe, input, search, {}, [&](std::int64_t, const std::string& s) { out.push_back(s); });
    return arena.high_water_floats();
  };
  std::vector<std::string> few, many;
  const std::size_t small = peak(4, few), large = peak(40, many);
  REQUIRE(many.size() == 40);
  REQUIRE(large == small);
  // JSON Lines: every line a complete document with one sentence.
  const json header = decode::maps_header(m, "m", false, search, {});
  const std::string text = document_text(header, few, true);
  std::size_t lines = 0, start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    const json doc = json::parse(text.substr(start, end - start));
    REQUIRE(validator.validate(doc).empty());
    REQUIRE(doc["sentences"].size() == 1);
    REQUIRE(doc["sentences"][0]["index"] == lines);
  }
  REQUIRE(lines == 4);
  REQUIRE(start == text.size());
}

TEST_CASE("attend: streaming hands the sentences over in input order, each as the whole input gives it", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("muse"));
  randomize(m, 73);
  decode::SearchOptions search;
  search.max_len_b = 3.0f;
  // Lengths that a batch sorted by length would reorder, across chunk boundaries.
  const std::vector<std::string> lines{"a much longer line of words here", "b", "", "c d e f g", "h i", "j k l"};
  std::vector<std::vector<std::int32_t>> sources;
  for (const auto& l : lines) sources.push_back(bpe.encode(l));
  auto stream = [&](std::int64_t chunk) {
    decode::AttendInput input;
    input.source_lines = &lines;
    input.sources = &sources;
    input.chunk = chunk;
    Arena arena;
    Rng rng(0);
    nn::StepContext ctx{m.params(), arena, rng, false};
    std::vector<std::pair<std::int64_t, std::string>> got;
    decode::run_attend(ctx, m, bpe, input, search, {},
                       [&](std::int64_t i, const std::string& s) { got.emplace_back(i, s); });
    return got;
  };
  const auto whole = stream(static_cast<std::int64_t>(lines.size()));
  for (std::int64_t chunk : {1, 2, 4}) {
    INFO("chunk " << chunk);
    const auto got = stream(chunk);
    REQUIRE(got.size() == lines.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      REQUIRE(got[i].first == static_cast<std::int64_t>(i));
      const json doc = json::parse(got[i].second);
      REQUIRE(doc["source"] == lines[i]);
      // Another batch sums in another order: log-probabilities move in the last float
      // digits, a rounded weight by a unit at most.
      require_json_close(doc, json::parse(whole[i].second), 2e-4);
    }
  }
}

TEST_CASE("attend: the page is self-contained and embeds every sentence safely", "[attend]") {
  const text::Bpe bpe;
  model::Seq2Seq m(small_config("convsan2d"));
  randomize(m, 81);
  const std::vector<std::string> lines{"a </script> b", "x & \"y\"", ""};
  const auto sentences = attend_lines(m, bpe, lines, nullptr, {}, {});
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  {
    decode::MapsPageWriter page(f, decode::maps_header(m, "m", false, {}, {}));
    for (std::size_t i = 0; i < sentences.size(); ++i) page.add(static_cast<std::int64_t>(i), lines[i], sentences[i]);
    page.finish();
  }
  std::fclose(f);
  const std::string html(buffer, size);
  std::free(buffer);
  REQUIRE(html.rfind("<!doctype html>", 0) == 0);
  for (const char* outside : {"http://", "https://", "<script src", "<link", "@import", "url("}) {
    INFO(outside);
    REQUIRE(html.find(outside) == std::string::npos);
  }
  // Each sentence is one data block whose text parses back to the sentence's JSON.
  std::size_t at = 0;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    at = html.find("class=\"attn-sentence\"", at);
    REQUIRE(at != std::string::npos);
    const std::size_t open = html.find('>', at) + 1, close = html.find("</script>", open);
    const std::string block = html.substr(open, close - open);
    REQUIRE(block.find('<') == std::string::npos);  // "</s>", "</script>" inside strings are escaped
    REQUIRE(json::parse(block) == json::parse(sentences[i]));
    at = close;
  }
  REQUIRE(html.find("class=\"attn-sentence\"", at) == std::string::npos);
  REQUIRE(html.find("data-preview=\"x &amp; &quot;y&quot;\"") != std::string::npos);
  REQUIRE(html.rfind("</html>\n") == html.size() - 8);
}
