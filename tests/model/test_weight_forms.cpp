// A model loaded into a compute type holds each weight matrix in that type's
// form, made once at load: every product through the form gives the bits of
// the product made the long way from the FP32 values (sgemm; gemm_bf16 with
// the weight rounded and packed at the call; gemm_int8 with the weight
// quantized at the call), forward and backward, for every arch. Training's
// bf16 forms (packed for the backward products too) change no gradient bit.
// A model loaded for decoding holds what its products read and no more: no
// gradients, no FP32 copy of a weight held as int8 or bf16; an int8 file's
// weights reach their int8 form without a round trip through FP32.
#include "../support.h"
#include "arch_variants.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/core/arena.h"
#include "attn/kernels/gemm_bf16.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/products.h"
#include "attn/model/model_file.h"
#include "attn/model/seq2seq.h"

using namespace attn;
using namespace attn::model;
using kernels::ComputeType;
using kernels::Trans;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

ModelConfig form_config(const ArchVariant& v, std::int64_t vocab) {
  ModelConfig config = small_arch_config(v);
  config.vocab_size = vocab;
  return config;
}

// A small model of the variant, its embeddings tied to the output projection or not, initialised from seed.
std::unique_ptr<Seq2Seq> initialized_model(const ArchVariant& v, std::int64_t vocab, bool tied, std::uint64_t seed) {
  ModelConfig config = form_config(v, vocab);
  config.share_all_embeddings = config.share_decoder_output = tied;
  auto model = std::make_unique<Seq2Seq>(config);
  Rng init(seed);
  model->initialize(init);
  return model;
}

// x·Wᵀ made the long way from the FP32 values, as before weights had forms.
std::vector<float> product_from_values(ComputeType type, const kernels::WeightForm& w, const std::vector<float>& x,
                                       std::int64_t m) {
  std::vector<float> y(static_cast<std::size_t>(m * w.rows), 0.0f);
  if (type == ComputeType::int8) {
    const kernels::QuantizedWeight q = kernels::quantize_weight(w.values, w.ld, w.rows, w.cols);
    kernels::gemm_int8(m, x.data(), w.cols, q, 0.0f, y.data(), w.rows);
  } else if (type == ComputeType::bf16) {
    kernels::gemm_bf16(Trans::N, Trans::T, m, w.rows, w.cols, 1.0f, x.data(), w.cols, w.values, w.ld, 0.0f, y.data(),
                       w.rows);
  } else {
    // Decoding's packed Wᵀ multiplies as sgemm_fp32 does with Wᵀ stored cols × rows.
    std::vector<float> wt(static_cast<std::size_t>(w.cols * w.rows));
    for (std::int64_t r = 0; r < w.rows; ++r)
      for (std::int64_t c = 0; c < w.cols; ++c) wt[static_cast<std::size_t>(c * w.rows + r)] = w.values[r * w.ld + c];
    kernels::sgemm_fp32(Trans::N, Trans::N, m, w.rows, w.cols, 1.0f, x.data(), w.cols, wt.data(), w.rows, 0.0f,
                        y.data(), w.rows);
  }
  return y;
}

double loss_and_grads(Seq2Seq& model, kernels::ComputeTypes types, nn::ParamStore::Use use, std::vector<float>& grads) {
  model.params().set_compute_types(types, use);
  Arena arena;
  Rng rng(11);
  nn::StepContext ctx{model.params(), arena, rng, false};
  const Batch batch = make_batch({{5, 6, 7, 8, 3, 9, 10}, {9, 4}, {10, 11, 12}}, {{4, 5, 6}, {7, 8, 9, 10, 5}, {11}});
  model.params().zero_grads();
  const double loss = model.forward_backward(ctx, batch, 0.1f, true, 1.0f).loss;
  const auto g = model.params().grads();
  grads.assign(g.begin(), g.end());
  model.params().set_compute_types(kernels::ComputeTypes::training(ComputeType::fp32), nn::ParamStore::Use::training);
  return loss;
}

// Whether the floats of parameter p are all inside weight matrices.
bool covered_by_matrices(const nn::ParamStore& params, nn::ParamId p) {
  const nn::ParamInfo& info = params.info(p);
  std::vector<bool> in(static_cast<std::size_t>(info.shape.numel()));
  for (const nn::WeightMatrix& m : params.weight_matrices())
    for (std::int64_t r = 0; r < m.rows; ++r)
      for (std::int64_t c = 0; c < m.cols; ++c) {
        const std::int64_t at = params.info(m.param).offset + m.first + r * m.ld + c - info.offset;
        if (at >= 0 && at < info.shape.numel()) in[static_cast<std::size_t>(at)] = true;
      }
  for (bool b : in)
    if (!b) return false;
  return true;
}

bool is_embedding(const nn::ParamInfo& p) { return p.name.find("embed") != std::string::npos; }

}  // namespace

TEST_CASE("model file, every arch and compute type: each weight's form is made at load and multiplies with the "
          "bits of the product made from the FP32 values",
          "[model][bf16][int8][io][arch]") {
  test::ScratchDir dir;
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(form_config(v, bpe.vocab().size()));
    Rng init(3);
    model.initialize(init);
    const auto path = dir.path() / "forms.attn";
    save_model_file(path, model, bpe);
    const LoadedModel fp32 = load_model_values(path);
    for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8}) {
      INFO("compute type " << kernels::compute_type_name(type));
      const LoadedModel loaded = load_model_file(path, type);
      const nn::ParamStore& params = loaded.model->params();
      REQUIRE(params.compute_type() == type);
      REQUIRE(params.activation_compute_type() == ComputeType::fp32);
      REQUIRE(!params.weight_matrices().empty());
      for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
        const kernels::WeightForm w = params.form({static_cast<int>(i)});
        const kernels::WeightForm w_fp32 = fp32.model->params().form({static_cast<int>(i)});
        INFO("weight matrix " << i << ": " << w.rows << " × " << w.cols);
        // Converted at load, not at each call; decoding needs no backward form.
        REQUIRE((w.fp32 != nullptr) == (type == ComputeType::fp32));
        REQUIRE((w.bf16 != nullptr) == (type == ComputeType::bf16));
        REQUIRE((w.int8 != nullptr) == (type == ComputeType::int8));
        REQUIRE(w.bf16_backward == nullptr);
        for (std::int64_t m : {1, 17}) {
          const std::vector<float> x = test::random_vector(static_cast<std::size_t>(m * w.cols), 40 + i);
          std::vector<float> y(static_cast<std::size_t>(m * w.rows), 0.0f);
          kernels::weight_product(w, m, x.data(), w.cols, 0.0f, y.data(), w.rows);
          REQUIRE(same_bits(y, product_from_values(type, w_fp32, x, m)));
        }
      }
    }
  }
}

TEST_CASE("model file, every arch and compute type: a model loaded for decoding holds no gradients and no FP32 "
          "copy of a weight held in its form; gradients come with the first backward",
          "[model][bf16][int8][io][arch][param_store]") {
  test::ScratchDir dir;
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchVariants)
    for (const bool tied : {true, false}) {
      INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm << " tied " << tied);
      const std::unique_ptr<Seq2Seq> made = initialized_model(v, bpe.vocab().size(), tied, 3);
      Seq2Seq& model = *made;
      const ModelConfig& config = model.config();
      const std::int64_t all_bytes = model.parameter_count() * static_cast<std::int64_t>(sizeof(float));
      // A model built in the process: every FP32 value, gradients at the first backward.
      REQUIRE(model.params().footprint().fp32_values == all_bytes);
      REQUIRE(model.params().footprint().gradients == 0);
      const auto path = dir.path() / "footprint.attn";
      save_model_file(path, model, bpe);
      for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8}) {
        INFO("compute type " << kernels::compute_type_name(type));
        LoadedModel loaded = load_model_file(path, type);
        nn::ParamStore& params = loaded.model->params();
        // Decode a sentence: still no gradient.
        Arena arena, state_arena;
        Rng rng(1);
        nn::StepContext ctx{params, arena, rng, false};
        const std::int32_t src[3] = {5, 6, 2}, length = 3, token = 1;
        const float* memory = loaded.model->encode(ctx, src, 1, 3, &length);
        DecoderState state = loaded.model->start_decoding(ctx, state_arena, memory, 1, 1, 3, &length, 4);
        std::vector<float> logprobs(static_cast<std::size_t>(config.vocab_size));
        loaded.model->decode_step(ctx, state, &token, logprobs.data());
        const nn::ParamStore::Footprint held = params.footprint();
        REQUIRE(held.gradients == 0);
        REQUIRE(std::as_const(params).grads().empty());
        // FP32 values exactly for what no matrix covers and, under bf16 and int8, for the embeddings
        // (gathered in FP32); under fp32 a tied table's rows are gathered from the packed output
        // projection, the same floats.
        std::int64_t expected = 0;
        for (nn::ParamId p = 0; p < static_cast<nn::ParamId>(params.entries().size()); ++p) {
          const bool embedding = is_embedding(params.info(p));
          const bool fp32_needed = !covered_by_matrices(params, p) || (embedding && type != ComputeType::fp32);
          INFO("parameter " << params.info(p).name);
          REQUIRE(params.holds_values(p) == fp32_needed);
          if (fp32_needed) expected += params.info(p).shape.numel() * static_cast<std::int64_t>(sizeof(float));
          if (!embedding) continue;
          const std::int64_t rows = params.info(p).shape[0], d = params.info(p).shape[1];
          std::vector<std::int32_t> ids(static_cast<std::size_t>(rows));
          for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(ids.size() - 1 - i);
          std::vector<float> got(static_cast<std::size_t>(rows * d)), want(got.size());
          params.gather_rows(p, ids.data(), got.data(), rows, 0.5f);
          model.params().gather_rows(p, ids.data(), want.data(), rows, 0.5f);
          REQUIRE(same_bits(got, want));
        }
        REQUIRE(held.fp32_values == expected);
        REQUIRE(held.fp32_values < all_bytes);
        for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
          const nn::WeightMatrix& m = params.weight_matrices()[i];
          INFO("weight matrix " << i << " of " << params.info(m.param).name);
          REQUIRE((params.matrix_values({static_cast<int>(i)}) != nullptr) ==
                  (is_embedding(params.info(m.param)) && type != ComputeType::fp32));
        }
        REQUIRE(held.forms > 0);
        REQUIRE_THROWS_AS(params.values(), std::logic_error);
      }
      // Loaded with every FP32 value, as training loads it: a backward allocates them.
      LoadedModel trained = load_model_values(path);
      REQUIRE(trained.model->params().footprint().fp32_values == all_bytes);
      REQUIRE(trained.model->params().footprint().forms == 0);
      Arena arena;
      Rng rng(11);
      nn::StepContext ctx{trained.model->params(), arena, rng, true};
      const Batch batch = make_batch({{5, 6, 7}}, {{4, 5}});
      trained.model->forward_backward(ctx, batch, 0.1f, true, 1.0f);
      REQUIRE(trained.model->params().footprint().gradients == all_bytes);
    }
}

TEST_CASE("model file, every arch: an int8 file loaded as int8 takes its int8 rows as they are, with the forms of "
          "quantizing its dequantized weights, bit for bit",
          "[model][int8][io][arch][quantize]") {
  test::ScratchDir dir;
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(form_config(v, bpe.vocab().size()));
    Rng init(4);
    model.initialize(init);
    const auto path = dir.path() / "int8.attn";
    save_model_file(path, model, bpe, {}, {}, WeightStorage::int8);
    const LoadedModel dequantized = load_model_values(path);
    const LoadedModel loaded = load_model_file(path, ComputeType::int8);
    REQUIRE(loaded.int8_params > 0);
    const nn::ParamStore& params = loaded.model->params();
    for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
      const nn::WeightMatrix& m = params.weight_matrices()[i];
      INFO("weight matrix " << i << " of " << params.info(m.param).name);
      const kernels::QuantizedWeight want = kernels::quantize_weight(
          dequantized.model->params().matrix_values({static_cast<int>(i)}), m.ld, m.rows, m.cols);
      const kernels::QuantizedWeight& got = *params.form({static_cast<int>(i)}).int8;
      REQUIRE(got.packed == want.packed);
      REQUIRE(got.sums == want.sums);
      REQUIRE(std::memcmp(got.scales.data(), want.scales.data(), want.scales.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("model file, every arch: an int8 file loaded as int8 holds no FP32 embedding table where the output "
          "projection tied to it holds it in int8; its rows gather the bits the FP32 table gave",
          "[model][int8][io][arch][quantize][embedding][param_store]") {
  test::ScratchDir dir;
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchVariants)
    for (const bool tied : {true, false}) {
      INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm << " tied " << tied);
      const std::unique_ptr<Seq2Seq> made = initialized_model(v, bpe.vocab().size(), tied, 5);
      Seq2Seq& model = *made;
      const ModelConfig& config = model.config();
      // Row 3 of each embedding so small that its scale is subnormal: the form
      // re-quantizes it, and the gather must still give the file's values.
      for (nn::ParamId p = 0; p < static_cast<nn::ParamId>(model.params().entries().size()); ++p)
        if (is_embedding(model.params().info(p)))
          for (std::int64_t c = 0; c < config.dim; ++c)
            model.params().value(p)[3 * config.dim + c] = 1e-39f * static_cast<float>(c % 5 - 2);
      const auto path = dir.path() / "int8.attn", fp32_path = dir.path() / "fp32.attn";
      save_model_file(path, model, bpe, {}, {}, WeightStorage::int8);
      save_model_file(fp32_path, model, bpe);
      const LoadedModel dequantized = load_model_values(path);
      const LoadedModel loaded = load_model_file(path, ComputeType::int8);
      const nn::ParamStore& params = loaded.model->params();
      // An FP32 file loaded as int8 gathers from its FP32 table (its original weights).
      const LoadedModel fp32_file = load_model_file(fp32_path, ComputeType::int8);
      std::int64_t expected = 0;
      for (nn::ParamId p = 0; p < static_cast<nn::ParamId>(params.entries().size()); ++p) {
        INFO("parameter " << params.info(p).name);
        const bool fp32_needed = !covered_by_matrices(params, p) || (is_embedding(params.info(p)) && !tied);
        REQUIRE(params.holds_values(p) == fp32_needed);
        if (fp32_needed) expected += params.info(p).shape.numel() * static_cast<std::int64_t>(sizeof(float));
        if (!is_embedding(params.info(p))) continue;
        std::vector<std::int32_t> ids(static_cast<std::size_t>(config.vocab_size));
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(ids.size() - 1 - i);
        const float scale = std::sqrt(static_cast<float>(config.dim));
        std::vector<float> want(ids.size() * static_cast<std::size_t>(config.dim)), got(want.size());
        dequantized.model->params().gather_rows(p, ids.data(), want.data(), config.vocab_size, scale);
        params.gather_rows(p, ids.data(), got.data(), config.vocab_size, scale);
        REQUIRE(same_bits(got, want));
        REQUIRE(want[static_cast<std::size_t>((config.vocab_size - 1 - 3) * config.dim + 1)] != 0.0f);
      }
      REQUIRE(params.footprint().fp32_values == expected);
      // The embedding's int8 rows cost their scales and row 3's FP32 values, not a table.
      const std::int64_t row_bytes = tied ? (config.vocab_size + config.dim) * std::int64_t{sizeof(float)} : 0;
      REQUIRE(params.footprint().forms - fp32_file.model->params().footprint().forms == row_bytes);
      for (nn::ParamId p = 0; p < static_cast<nn::ParamId>(params.entries().size()); ++p)
        if (is_embedding(params.info(p))) REQUIRE(fp32_file.model->params().holds_values(p));
    }
}

TEST_CASE("seq2seq, every arch: training's bf16 forms (backward products packed once per update) give the gradient "
          "of packing at each product, bit for bit",
          "[model][bf16][arch]") {
  using kernels::ComputeTypes;
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(form_config(v, 13));
    Rng init(3);
    model.initialize(init);
    std::vector<float> packed_once, packed_per_call;
    // Use::training_lean makes no backward forms: the backward products pack W as they go.
    const ComputeTypes bf16 = ComputeTypes::training(ComputeType::bf16);
    const double loss_once = loss_and_grads(model, bf16, nn::ParamStore::Use::training, packed_once);
    const double loss_per_call = loss_and_grads(model, bf16, nn::ParamStore::Use::training_lean, packed_per_call);
    REQUIRE(loss_once == loss_per_call);
    REQUIRE(same_bits(packed_once, packed_per_call));
    const kernels::WeightForm w = [&] {
      model.params().set_compute_types(bf16, nn::ParamStore::Use::training);
      return model.params().form({0});
    }();
    REQUIRE(w.bf16_backward != nullptr);
    REQUIRE(w.bf16_backward->n == w.cols);
    model.params().set_compute_types(bf16, nn::ParamStore::Use::training_lean);
    REQUIRE(model.params().form({0}).bf16_backward == nullptr);
  }
}

TEST_CASE("param store: the compute types are the pair set, decoding's activation products in FP32",
          "[model][bf16][int8][param_store]") {
  using kernels::ComputeTypes;
  Seq2Seq model(form_config(kArchVariants[0], 13));
  nn::ParamStore& params = model.params();
  using Use = nn::ParamStore::Use;
  REQUIRE(params.compute_type() == ComputeType::fp32);  // a store from allocate(): its FP32 values
  for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8}) {
    INFO("compute type " << kernels::compute_type_name(type));
    REQUIRE(ComputeTypes::decoding(type) == ComputeTypes{type, ComputeType::fp32});
    REQUIRE(ComputeTypes::training(type) == ComputeTypes{type, type});
    params.set_compute_types(ComputeTypes::decoding(type), Use::decoding);
    REQUIRE(params.compute_type() == type);
    REQUIRE(params.activation_compute_type() == ComputeType::fp32);
    params.set_compute_types(ComputeTypes::training(type), Use::training);
    REQUIRE(params.activation_compute_type() == type);
  }
}

// A bf16 training session owns its forms: it makes them again from the values
// before each update and lends them to the store for the forward and backward;
// the store's own (FP32, for validation) never change.
TEST_CASE("param store: a training session's lent forms are made from the changed values; the store's own stay FP32",
          "[model][bf16][param_store]") {
  Seq2Seq model(form_config(kArchVariants[0], 13));
  Rng init(5);
  model.initialize(init);
  nn::ParamStore& params = model.params();
  nn::WeightForms forms(kernels::ComputeTypes::training(ComputeType::bf16), nn::ParamStore::Use::training,
                        params.weight_matrices().size());
  params.make_forms(forms);
  for (float& v : params.values()) v = v * 0.5f + 0.01f;  // an optimizer step
  params.make_forms(forms);
  {
    const nn::ParamStore::Lend lend(params, forms);
    REQUIRE(params.compute_type() == ComputeType::bf16);
    REQUIRE(params.activation_compute_type() == ComputeType::bf16);
    REQUIRE_THROWS_AS(nn::ParamStore::Lend(params, forms), std::logic_error);
    for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
      const nn::WeightMatrix& m = params.weight_matrices()[i];
      const kernels::WeightForm f = params.form({static_cast<int>(i)});
      const float* w = params.value(m.param) + m.first;
      const kernels::Bf16PackedB fresh = kernels::pack_bf16_b(w, m.ld, 1, m.rows, m.cols);
      const kernels::Bf16PackedB fresh_backward = kernels::pack_bf16_b(w, 1, m.ld, m.cols, m.rows);
      REQUIRE(f.bf16->pairs == fresh.pairs);
      REQUIRE(f.bf16_backward->pairs == fresh_backward.pairs);
    }
  }
  const kernels::WeightForm fp32_form = params.form({0});
  REQUIRE(fp32_form.type == ComputeType::fp32);
  REQUIRE(fp32_form.bf16 == nullptr);
  REQUIRE(fp32_form.bf16_backward == nullptr);
  REQUIRE(fp32_form.int8 == nullptr);
  REQUIRE(params.activation_compute_type() == ComputeType::fp32);
}
