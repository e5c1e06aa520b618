// The weights attend draws are the model's: forced maps equal an independent
// double-precision forward of the Transformer written here from the
// parameters (pre- and post-norm); greedy and beam maps equal forced maps on
// the search's own output, with the output translate picks and scores that
// agree; a sentence's maps are the same alone and in a padded chunk, for
// every arch.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/decode/maps.h"
#include "attn/decode/search.h"
#include "maps_fixtures.h"

using namespace attn;
using attn::test::ArchVariant;
using attn::test::attend_lines;
using attn::test::kArchs;
using attn::test::kLines;
using attn::test::kTargets;
using attn::test::randomize;
using attn::test::require_json_close;
using attn::test::small_config;
using attn::test::variant_config;
using nlohmann::json;

namespace {

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

}  // namespace

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
