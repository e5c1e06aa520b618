#include "attn/model/seq2seq.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "attn/core/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/text/vocab.h"

namespace attn::model {

Seq2Seq::Seq2Seq(const ModelConfig& config) : Seq2Seq(config, Declared{}) { params_.allocate(); }

namespace {
const ModelConfig& validated(const ModelConfig& config) {
  config.validate();
  return config;
}
}  // namespace

Seq2Seq::Seq2Seq(const ModelConfig& config, Declared)
    : config_(validated(config)), positions_(config.max_positions, config.dim) {
  const std::int64_t d = config_.dim;
  if (config_.share_all_embeddings) {
    src_embed_.declare(params_, "embed", config_.vocab_size, d);
    tgt_embed_ = src_embed_;
  } else {
    src_embed_.declare(params_, "src_embed", config_.vocab_size, d);
    tgt_embed_.declare(params_, "tgt_embed", config_.vocab_size, d);
  }
  if (!config_.share_all_embeddings && !config_.share_decoder_output)
    out_proj_ = params_.add("out_proj.weight", {config_.vocab_size, d}, nn::Init::normal,
                            static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  output_matrix_ = params_.add_weight_matrix({output_weight(), config_.vocab_size, d, d});
  const nn::LayerShape shape{d,
                             config_.heads,
                             config_.ffn_dim,
                             config_.dropout,
                             config_.activation_dropout,
                             config_.norm == Norm::pre,
                             config_.parallel_layers()};
  encoder_.resize(static_cast<std::size_t>(config_.enc_layers));
  for (std::size_t i = 0; i < encoder_.size(); ++i)
    encoder_[i].declare(params_, "enc." + std::to_string(i), shape,
                        config_.encoder_mixer(static_cast<std::int64_t>(i)));
  decoder_.resize(static_cast<std::size_t>(config_.dec_layers));
  for (std::size_t i = 0; i < decoder_.size(); ++i)
    decoder_[i].declare(params_, "dec." + std::to_string(i), shape,
                        config_.decoder_self_mixer(static_cast<std::int64_t>(i)));
  if (shape.pre_norm) {
    enc_norm_.declare(params_, "enc.ln", d);
    dec_norm_.declare(params_, "dec.ln", d);
  }
  embed_dropout_.p = config_.dropout;
}

nn::ParamId Seq2Seq::output_weight() const { return out_proj_ >= 0 ? out_proj_ : tgt_embed_.table; }

namespace {
void check_positions(std::int64_t t, std::int64_t max_positions) {
  if (t > max_positions)  // the message is built only then: this runs every step
    throw Error("a sentence of " + std::to_string(t) + " tokens is longer than the model's " +
                std::to_string(max_positions) + " positions; it cannot be encoded");
}
}  // namespace

void Seq2Seq::forward_encoder(nn::StepContext& ctx, const std::int32_t* src, std::int64_t batch, std::int64_t ts,
                              const std::int32_t* src_lengths, StackActivations& acts, bool keep_layers) const {
  check_positions(ts, config_.max_positions);
  const std::int64_t d = config_.dim;
  float* x = ctx.arena.alloc(batch * ts * d);
  src_embed_.forward(ctx.params, positions_, src, x, batch, ts);
  acts.embed_drop = embed_dropout_.forward(ctx, x, batch * ts * d);
  acts.encoder.resize(encoder_.size());
  const float* h = x;
  // Without keep_layers, the layers' outputs alternate between two buffers and the rest of each
  // layer is released: the encoder then touches one layer's memory, not six (the six were a third
  // of the page faults of beam search over test2016).
  float* const outputs[2] = {keep_layers ? nullptr : ctx.arena.alloc(batch * ts * d),
                             keep_layers ? nullptr : ctx.arena.alloc(batch * ts * d)};  // [B·T, d] each
  for (std::size_t i = 0; i < encoder_.size(); ++i) {
    const Arena::Mark before = ctx.arena.mark();
    const float* out = encoder_[i].forward(ctx, h, batch, ts, src_lengths, acts.encoder[i]);
    if (keep_layers) {
      h = out;
      continue;
    }
    std::memcpy(outputs[i % 2], out, sizeof(float) * batch * ts * d);
    ctx.arena.release(before);
    h = outputs[i % 2];
  }
  acts.out = h;
  if (config_.norm == Norm::pre) {
    float* normed = ctx.arena.alloc(batch * ts * d);
    acts.norm = enc_norm_.forward(ctx, h, normed, batch * ts);
    acts.out = normed;
  }
}

void Seq2Seq::forward_decoder(nn::StepContext& ctx, const Batch& batch, const float* memory,
                              StackActivations& acts) const {
  check_positions(batch.tgt_len, config_.max_positions);
  const std::int64_t d = config_.dim, B = batch.size, ts = batch.src_len, tt = batch.tgt_len;
  float* x = ctx.arena.alloc(B * tt * d);
  tgt_embed_.forward(ctx.params, positions_, batch.tgt_in.data(), x, B, tt);
  acts.embed_drop = embed_dropout_.forward(ctx, x, B * tt * d);
  acts.decoder.resize(decoder_.size());
  const float* g = x;
  for (std::size_t i = 0; i < decoder_.size(); ++i)
    g = decoder_[i].forward(ctx, g, memory, B, tt, ts, batch.tgt_lengths.data(), batch.src_lengths.data(),
                            acts.decoder[i]);
  acts.out = g;
  if (config_.norm == Norm::pre) {
    float* normed = ctx.arena.alloc(B * tt * d);
    acts.norm = dec_norm_.forward(ctx, g, normed, B * tt);
    acts.out = normed;
  }
}

const float* Seq2Seq::encode(nn::StepContext& ctx, const std::int32_t* src, std::int64_t batch, std::int64_t ts,
                             const std::int32_t* src_lengths) const {
  StackActivations acts;
  forward_encoder(ctx, src, batch, ts, src_lengths, acts, false);
  return acts.out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> Seq2Seq::gradient_chunks() const {
  // The parameters named prefix*, which are declared (so laid out) together.
  auto span_of = [this](const std::string& prefix) {
    std::int64_t begin = params_.total_floats(), end = 0;
    for (const nn::ParamInfo& p : params_.entries())
      if (p.name.rfind(prefix, 0) == 0) {
        begin = std::min(begin, p.offset);
        end = std::max(end, p.offset + p.shape.numel());
      }
    return std::pair{begin, std::max(begin, end)};
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
  const bool pre = config_.norm == Norm::pre;
  if (pre) chunks.push_back(span_of("dec.ln."));
  for (std::size_t i = decoder_.size(); i-- > 0;) chunks.push_back(span_of("dec." + std::to_string(i) + "."));
  if (pre) chunks.push_back(span_of("enc.ln."));
  for (std::size_t i = encoder_.size(); i-- > 0;) chunks.push_back(span_of("enc." + std::to_string(i) + "."));
  // The rest: whatever no chunk above covers, as maximal ranges in offset order.
  std::vector<std::pair<std::int64_t, std::int64_t>> covered(chunks);
  std::sort(covered.begin(), covered.end());
  std::int64_t at = 0;
  for (const auto& [begin, end] : covered) {
    if (begin > at) chunks.emplace_back(at, begin);
    at = std::max(at, end);
  }
  if (at < params_.total_floats()) chunks.emplace_back(at, params_.total_floats());
  return chunks;
}

nn::LossSums Seq2Seq::forward_backward(nn::StepContext& ctx, const Batch& batch, float label_smoothing, bool backward,
                                       float grad_scale, const std::function<void(std::size_t)>* gradients_ready) {
  const std::int64_t d = config_.dim, B = batch.size, ts = batch.src_len, tt = batch.tgt_len;
  const bool pre = config_.norm == Norm::pre;
  // The layers' saved activations are kept from step to step (refilled, not reallocated).
  StackActivations& enc = training_activations_.encoder;
  StackActivations& dec = training_activations_.decoder;
  forward_encoder(ctx, batch.src.data(), B, ts, batch.src_lengths.data(), enc);
  forward_decoder(ctx, batch, enc.out, dec);
  const float* dec_out = dec.out;

  if (backward) params_.grads();  // allocated (zeros) when backward first needs them, as in llm.c
  float* d_dec_out = backward ? ctx.arena.alloc_zeroed(B * tt * d) : nullptr;
  const Arena::Mark before_loss = ctx.arena.mark();
  const nn::LossSums sums = nn::output_loss(params_, output_matrix_, dec_out, batch.tgt_out.data(), B * tt, d,
                                            config_.vocab_size, label_smoothing, text::kPad, grad_scale, d_dec_out,
                                            ctx.arena);
  ctx.arena.release(before_loss);
  if (!backward) return sums;

  // Gradient chunks are done in gradient_chunks() order.
  std::size_t chunk = 0;
  auto chunk_done = [&] {
    if (gradients_ready) (*gradients_ready)(chunk);
    ++chunk;
  };
  // Decoder backward: each layer's temporaries are released once its input gradient is done.
  float* dg = d_dec_out;
  if (pre) {
    dg = ctx.arena.alloc_zeroed(B * tt * d);
    dec_norm_.backward(ctx, dec.norm, d_dec_out, dg);
    chunk_done();
  }
  float* dmemory = ctx.arena.alloc_zeroed(B * ts * d);
  for (std::size_t i = decoder_.size(); i-- > 0;) {
    float* dprev = ctx.arena.alloc_zeroed(B * tt * d);
    const Arena::Mark mark = ctx.arena.mark();
    decoder_[i].backward(ctx, dec.decoder[i], dg, dprev, dmemory);
    ctx.arena.release(mark);
    chunk_done();
    dg = dprev;
  }
  embed_dropout_.backward(dec.embed_drop, dg, dg);
  tgt_embed_.backward(params_, batch.tgt_in.data(), dg, B * tt);

  // Encoder backward
  float* dh = dmemory;
  if (pre) {
    dh = ctx.arena.alloc_zeroed(B * ts * d);
    enc_norm_.backward(ctx, enc.norm, dmemory, dh);
    chunk_done();
  }
  for (std::size_t i = encoder_.size(); i-- > 0;) {
    float* dprev = ctx.arena.alloc_zeroed(B * ts * d);
    const Arena::Mark mark = ctx.arena.mark();
    encoder_[i].backward(ctx, enc.encoder[i], dh, dprev);
    ctx.arena.release(mark);
    chunk_done();
    dh = dprev;
  }
  embed_dropout_.backward(enc.embed_drop, dh, dh);
  src_embed_.backward(params_, batch.src.data(), dh, B * ts);
  return sums;
}

DecoderState Seq2Seq::start_decoding(nn::StepContext& ctx, Arena& state_arena, const float* memory,
                                     std::int64_t sentences, std::int64_t beams, std::int64_t ts,
                                     const std::int32_t* src_lengths, std::int64_t t_max) const {
  check_positions(t_max, config_.max_positions);
  DecoderState state;
  state.sentences = sentences;
  state.beams = beams;
  state.src_len = ts;
  state.t_max = t_max;
  state.src_lengths.assign(src_lengths, src_lengths + sentences);
  state.layers.resize(decoder_.size());
  // The caches outlive the step arena: carve them from the state arena. The
  // self caches first: with the same hypotheses and t_max (search.cpp keeps
  // t_max from batch to batch) they land on the pages the last batch touched,
  // whatever the source length.
  nn::StepContext state_ctx{ctx.params, state_arena, ctx.rng, false};
  for (std::size_t i = 0; i < decoder_.size(); ++i) {
    state.layers[i].t_max = t_max;
    state.layers[i].src_len = ts;
    decoder_[i].start_self(state_ctx, sentences, beams, state.layers[i]);
  }
  for (std::size_t i = 0; i < decoder_.size(); ++i)
    decoder_[i].start_cross(state_ctx, memory, sentences, state.layers[i]);
  return state;
}

void Seq2Seq::decode_step(nn::StepContext& ctx, DecoderState& state, const std::int32_t* tokens,
                          float* logprobs) const {
  require(state.t < state.t_max, "decoding past the maximum length");
  const std::int64_t d = config_.dim, n = state.hypotheses();
  float* x = ctx.arena.alloc(n * d);
  // Each hypothesis is a sequence of length 1 at position t.
  for (std::int64_t i = 0; i < n; ++i) tgt_embed_.forward(ctx.params, positions_, tokens + i, x + i * d, 1, 1, state.t);
  const float* h = x;
  for (std::size_t i = 0; i < decoder_.size(); ++i)
    h = decoder_[i].step(ctx, h, state.sentences, state.beams, state.t, state.src_lengths.data(), state.layers[i]);
  if (config_.norm == Norm::pre) {
    float* normed = ctx.arena.alloc(n * d);
    dec_norm_.forward(ctx, h, normed, n);
    h = normed;
  }
  nn::output_log_probs(params_, output_matrix_, h, logprobs, n, d, config_.vocab_size);
  ++state.t;
}

void Seq2Seq::select(DecoderState& state, std::span<const std::int32_t> order) const {
  const std::int64_t K = state.beams, kept = static_cast<std::int64_t>(order.size()) / K;
  // Kept sentence s comes from sentence from[s] ≥ s, increasing: copying them in
  // order of s never overwrites a row still to be read.
  bool valid = static_cast<std::int64_t>(order.size()) == kept * K;
  std::vector<std::int64_t> from(static_cast<std::size_t>(kept));
  for (std::int64_t s = 0; s < kept && valid; ++s) {
    from[s] = order[s * K] / K;
    valid = (s == 0 ? order[0] >= 0 : from[s] > from[s - 1]) && from[s] < state.sentences;
    for (std::int64_t k = 0; k < K; ++k)
      valid = valid && order[s * K + k] >= from[s] * K && order[s * K + k] < (from[s] + 1) * K;
  }
  if (!valid) throw std::logic_error("Seq2Seq::select: order does not keep whole sentences in increasing order");
  const std::int64_t kv_block = state.src_len * 2 * config_.dim;
#pragma omp parallel for schedule(static, 1)
  for (std::size_t l = 0; l < state.layers.size(); ++l) {
    nn::DecoderLayerCache& layer = state.layers[l];
    const std::int64_t used = state.t * layer.self_width, block = state.t_max * layer.self_width;
    auto row = [&](std::int64_t i) { return layer.self_cache + i * block; };
    // A sentence's beams, reordered in place; kept per thread between steps
    // (allocated per call, its pages were faulted in and cleared every step).
    thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<std::size_t>(K * used)) scratch.resize(static_cast<std::size_t>(K * used));
    for (std::int64_t s = 0; s < kept; ++s) {
      if (from[s] != s) {
        std::memcpy(layer.cross_kv + s * kv_block, layer.cross_kv + from[s] * kv_block, sizeof(float) * kv_block);
        for (std::int64_t k = 0; k < K; ++k) std::memcpy(row(s * K + k), row(order[s * K + k]), sizeof(float) * used);
        continue;
      }
      if (used == 0) continue;  // before the first step: nothing cached yet, and scratch.data() may be null
      for (std::int64_t k = 0; k < K; ++k)
        if (order[s * K + k] != s * K + k)
          std::memcpy(scratch.data() + k * used, row(order[s * K + k]), sizeof(float) * used);
      for (std::int64_t k = 0; k < K; ++k)
        if (order[s * K + k] != s * K + k) std::memcpy(row(s * K + k), scratch.data() + k * used, sizeof(float) * used);
    }
  }
  for (std::int64_t s = 0; s < kept; ++s) state.src_lengths[s] = state.src_lengths[from[s]];
  state.src_lengths.resize(static_cast<std::size_t>(kept));
  state.sentences = kept;
}

void Seq2Seq::teacher_forced_log_probs(nn::StepContext& ctx, const Batch& batch, float* logprobs) const {
  const float* memory = encode(ctx, batch.src.data(), batch.size, batch.src_len, batch.src_lengths.data());
  StackActivations dec;
  forward_decoder(ctx, batch, memory, dec);
  nn::output_log_probs(params_, output_matrix_, dec.out, logprobs, batch.size * batch.tgt_len, config_.dim,
                       config_.vocab_size);
}

}  // namespace attn::model

namespace attn::model {

std::vector<SentenceMaps> Seq2Seq::attention_maps(nn::StepContext& ctx, const Batch& batch) const {
  StackActivations enc, dec;
  forward_encoder(ctx, batch.src.data(), batch.size, batch.src_len, batch.src_lengths.data(), enc);
  forward_decoder(ctx, batch, enc.out, dec);
  const std::int64_t H = config_.heads, ts = batch.src_len, tt = batch.tgt_len;
  std::vector<SentenceMaps> maps(static_cast<std::size_t>(batch.size));
  for (std::int64_t b = 0; b < batch.size; ++b) {
    SentenceMaps& m = maps[static_cast<std::size_t>(b)];
    m.src_len = batch.src_lengths[b];
    m.tgt_len = batch.tgt_lengths[b];
    for (std::size_t i = 0; i < encoder_.size(); ++i)
      m.encoder.push_back(encoder_[i].self_attn->export_maps(*enc.encoder[i].attn, b));
    for (std::size_t i = 0; i < decoder_.size(); ++i) {
      m.decoder.push_back(decoder_[i].self_attn->export_maps(*dec.decoder[i].self, b));
      const float* probs = dec.decoder[i].cross.probs;  // [B, H, Tt, Ts]
      std::vector<float> cross(static_cast<std::size_t>(H * m.tgt_len * m.src_len));
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t r = 0; r < m.tgt_len; ++r)
          std::memcpy(cross.data() + (h * m.tgt_len + r) * m.src_len, probs + ((b * H + h) * tt + r) * ts,
                      sizeof(float) * m.src_len);
      m.cross.push_back(std::move(cross));
    }
  }
  return maps;
}

std::vector<std::string> Seq2Seq::encoder_mixer_kinds() const {
  std::vector<std::string> kinds;
  for (const auto& layer : encoder_) kinds.push_back(layer.self_attn->kind());
  return kinds;
}

std::vector<std::string> Seq2Seq::decoder_mixer_kinds() const {
  std::vector<std::string> kinds;
  for (const auto& layer : decoder_) kinds.push_back(layer.self_attn->kind());
  return kinds;
}

}  // namespace attn::model
