// A model loaded into a compute type holds each weight matrix in that type's
// form, made once at load: every product through the form gives the bits of
// the product made the long way from the FP32 values (sgemm; gemm_bf16 with
// the weight rounded and packed at the call; gemm_int8 with the weight
// quantized at the call), forward and backward, for every arch. Training's
// bf16 forms (packed for the backward products too) change no gradient bit.
#include "../support.h"
#include "arch_variants.h"

#include <catch2/catch.hpp>

#include <cstring>
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
    kernels::sgemm_fp32(Trans::N, Trans::T, m, w.rows, w.cols, 1.0f, x.data(), w.cols, w.values, w.ld, 0.0f, y.data(),
                        w.rows);
  }
  return y;
}

double loss_and_grads(Seq2Seq& model, ComputeType type, nn::ParamStore::Use use, std::vector<float>& grads) {
  model.params().set_compute_type(type, use);
  Arena arena;
  Rng rng(11);
  nn::StepContext ctx{model.params(), arena, rng, false};
  const Batch batch = make_batch({{5, 6, 7, 8, 3, 9, 10}, {9, 4}, {10, 11, 12}}, {{4, 5, 6}, {7, 8, 9, 10, 5}, {11}});
  model.params().zero_grads();
  const double loss = model.forward_backward(ctx, batch, 0.1f, true, 1.0f).loss;
  const auto g = model.params().grads();
  grads.assign(g.begin(), g.end());
  model.params().set_compute_type(ComputeType::fp32);
  return loss;
}

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
    for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8}) {
      INFO("compute type " << kernels::compute_type_name(type));
      const LoadedModel loaded = load_model_file(path, type);
      const nn::ParamStore& params = loaded.model->params();
      REQUIRE(params.compute_type() == type);
      REQUIRE(!params.weight_matrices().empty());
      for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
        const kernels::WeightForm w = params.form({static_cast<int>(i)});
        INFO("weight matrix " << i << ": " << w.rows << " × " << w.cols);
        // Converted at load, not at each call; decoding needs no backward form.
        REQUIRE((w.bf16 != nullptr) == (type == ComputeType::bf16));
        REQUIRE((w.int8 != nullptr) == (type == ComputeType::int8));
        REQUIRE(w.bf16_backward == nullptr);
        for (std::int64_t m : {1, 17}) {
          const std::vector<float> x = test::random_vector(static_cast<std::size_t>(m * w.cols), 40 + i);
          std::vector<float> y(static_cast<std::size_t>(m * w.rows), 0.0f);
          kernels::weight_product(w, m, x.data(), w.cols, 0.0f, y.data(), w.rows);
          REQUIRE(same_bits(y, product_from_values(type, w, x, m)));
        }
      }
    }
  }
}

TEST_CASE("seq2seq, every arch: training's bf16 forms (backward products packed once per update) give the gradient "
          "of packing at each product, bit for bit",
          "[model][bf16][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(form_config(v, 13));
    Rng init(3);
    model.initialize(init);
    std::vector<float> packed_once, packed_per_call;
    // Use::training_lean makes no backward forms: the backward products pack W as they go.
    const double loss_once = loss_and_grads(model, ComputeType::bf16, nn::ParamStore::Use::training, packed_once);
    const double loss_per_call =
        loss_and_grads(model, ComputeType::bf16, nn::ParamStore::Use::training_lean, packed_per_call);
    REQUIRE(loss_once == loss_per_call);
    REQUIRE(same_bits(packed_once, packed_per_call));
    const kernels::WeightForm w = [&] {
      model.params().set_compute_type(ComputeType::bf16, nn::ParamStore::Use::training);
      return model.params().form({0});
    }();
    REQUIRE(w.bf16_backward != nullptr);
    REQUIRE(w.bf16_backward->n == w.cols);
    model.params().set_compute_type(ComputeType::bf16, nn::ParamStore::Use::training_lean);
    REQUIRE(model.params().form({0}).bf16_backward == nullptr);
    model.params().set_compute_type(ComputeType::fp32);
  }
}

TEST_CASE("param store: products between activations are in the weights' type in training, FP32 in decoding",
          "[model][bf16][int8]") {
  Seq2Seq model(form_config(kArchVariants[0], 13));
  nn::ParamStore& params = model.params();
  using Use = nn::ParamStore::Use;
  for (ComputeType type : {ComputeType::fp32, ComputeType::bf16, ComputeType::int8}) {
    INFO("compute type " << kernels::compute_type_name(type));
    params.set_compute_type(type, Use::decoding);
    REQUIRE(params.compute_type() == type);
    REQUIRE(params.activation_compute_type() == ComputeType::fp32);
    for (Use use : {Use::training, Use::training_lean}) {
      params.set_compute_type(type, use);
      REQUIRE(params.activation_compute_type() == type);
    }
  }
  params.set_compute_type(ComputeType::fp32);
}

// Training switches to bf16 for each update and back to FP32 for the optimizer; the forms' storage
// is kept across the switch, so what matters is that the next switch packs the values as they are
// then, and that FP32 never shows a stale form.
TEST_CASE("param store: forms kept across an FP32 interlude are rebuilt from the changed values", "[model][bf16]") {
  Seq2Seq model(form_config(kArchVariants[0], 13));
  Rng init(5);
  model.initialize(init);
  nn::ParamStore& params = model.params();
  using Use = nn::ParamStore::Use;
  params.set_compute_type(ComputeType::bf16, Use::training);
  params.set_compute_type(ComputeType::fp32);
  const kernels::WeightForm fp32_form = params.form({0});
  REQUIRE(fp32_form.bf16 == nullptr);
  REQUIRE(fp32_form.bf16_backward == nullptr);
  REQUIRE(fp32_form.int8 == nullptr);
  for (float& v : params.values()) v = v * 0.5f + 0.01f;  // an optimizer step
  params.set_compute_type(ComputeType::bf16, Use::training);
  for (std::size_t i = 0; i < params.weight_matrices().size(); ++i) {
    const nn::WeightMatrix& m = params.weight_matrices()[i];
    const kernels::WeightForm f = params.form({static_cast<int>(i)});
    const float* w = params.value(m.param) + m.first;
    const kernels::Bf16PackedB fresh = kernels::pack_bf16_b(w, m.ld, 1, m.rows, m.cols);
    const kernels::Bf16PackedB fresh_backward = kernels::pack_bf16_b(w, 1, m.ld, m.cols, m.rows);
    REQUIRE(f.bf16->pairs == fresh.pairs);
    REQUIRE(f.bf16_backward->pairs == fresh_backward.pairs);
  }
  params.set_compute_type(ComputeType::fp32);
}
