#include "attn/decode/search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "attn/text/vocab.h"

namespace attn::decode {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::int64_t max_target_len(const SearchOptions& o, std::int64_t src_len, std::int64_t max_positions) {
  const auto len = static_cast<std::int64_t>(o.max_len_a * static_cast<float>(src_len) + o.max_len_b);
  return std::clamp<std::int64_t>(len, 1, max_positions - 1);
}

// The encoder over a batch, its memory repeated `copies` times per sentence.
struct Encoded {
  model::Batch batch;
  std::vector<std::int32_t> src_lengths;  // [B·copies]
  model::DecoderState state;
  std::vector<std::int64_t> max_len;  // [B]
};

Encoded encode_batch(nn::StepContext& ctx, Arena& state_arena, const model::Seq2Seq& model,
                     const std::vector<std::vector<std::int32_t>>& sources, std::int64_t copies,
                     const SearchOptions& options) {
  Encoded e;
  e.batch = model::make_batch(sources, {});
  const std::int64_t B = e.batch.size, ts = e.batch.src_len, d = model.config().dim;
  const float* memory = model.encode(ctx, e.batch.src.data(), B, ts, e.batch.src_lengths.data());
  float* expanded = state_arena.alloc(B * copies * ts * d);
  std::int64_t t_max = 1;
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t c = 0; c < copies; ++c) {
      std::memcpy(expanded + (b * copies + c) * ts * d, memory + b * ts * d, sizeof(float) * ts * d);
      e.src_lengths.push_back(e.batch.src_lengths[b]);
    }
    e.max_len.push_back(max_target_len(options, e.batch.src_lengths[b], model.config().max_positions));
    t_max = std::max(t_max, e.max_len.back() + 1);
  }
  e.state = model.start_decoding(ctx, state_arena, expanded, B * copies, ts, e.src_lengths.data(), t_max);
  return e;
}

}  // namespace

std::vector<Hypothesis> greedy_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                      const std::vector<std::vector<std::int32_t>>& sources,
                                      const SearchOptions& options) {
  Arena state_arena;
  Encoded e = encode_batch(ctx, state_arena, model, sources, 1, options);
  const std::int64_t B = e.batch.size, V = model.config().vocab_size;
  std::vector<Hypothesis> out(static_cast<std::size_t>(B));
  std::vector<bool> done(static_cast<std::size_t>(B), false);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(B), text::kBos);
  std::vector<float> logprobs(static_cast<std::size_t>(B * V));
  std::int64_t remaining = B;
  for (std::int64_t t = 0; remaining > 0; ++t) {
    ctx.arena.reset();
    model.decode_step(ctx, e.state, tokens.data(), logprobs.data());
    for (std::int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      const float* row = logprobs.data() + b * V;
      std::int32_t best = text::kEos;  // never <pad> or <s>, as in beam search
      for (std::int32_t w = 0; w < V; ++w)
        if (w != text::kPad && w != text::kBos && row[w] > row[best]) best = w;
      if (t >= e.max_len[b]) best = text::kEos;  // forced end, as beam search does
      out[b].logprob += row[best];
      if (best == text::kEos) {
        done[b] = true;
        --remaining;
        const float length = static_cast<float>(out[b].tokens.size() + 1);
        out[b].score = out[b].logprob / std::pow(length, options.lenpen);
      } else {
        out[b].tokens.push_back(best);
      }
      tokens[b] = best;
    }
  }
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& options) {
  const std::int64_t K = std::max(1, options.beam);
  Arena state_arena;
  Encoded e = encode_batch(ctx, state_arena, model, sources, K, options);
  const std::int64_t B = e.batch.size, V = model.config().vocab_size, N = B * K;

  // Live hypotheses: hypothesis b·K + k of sentence b.
  std::vector<std::vector<std::int32_t>> prefix(static_cast<std::size_t>(N));
  std::vector<float> score(static_cast<std::size_t>(N), kNegInf);
  for (std::int64_t b = 0; b < B; ++b) score[b * K] = 0.0f;  // only one beam starts
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(N), text::kBos);
  std::vector<std::vector<Hypothesis>> finished(static_cast<std::size_t>(B));
  std::vector<bool> done(static_cast<std::size_t>(B), false);
  std::vector<float> logprobs(static_cast<std::size_t>(N * V));
  std::vector<std::int32_t> order(static_cast<std::size_t>(N));

  struct Candidate {
    float score;
    std::int32_t hyp, word;
  };
  std::vector<Candidate> candidates;
  std::int64_t remaining = B;
  for (std::int64_t t = 0; remaining > 0; ++t) {
    ctx.arena.reset();
    model.decode_step(ctx, e.state, tokens.data(), logprobs.data());
    std::vector<std::vector<std::int32_t>> next_prefix(static_cast<std::size_t>(N));
    std::vector<float> next_score(static_cast<std::size_t>(N), kNegInf);
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t k = 0; k < K; ++k) order[b * K + k] = static_cast<std::int32_t>(b * K + k);
      if (done[b]) continue;
      const bool force_end = t >= e.max_len[b];
      // The best 2K (hypothesis, word) pairs of this sentence.
      candidates.clear();
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t hyp = b * K + k;
        if (score[hyp] == kNegInf) continue;
        const float* row = logprobs.data() + hyp * V;
        if (force_end) {
          candidates.push_back({score[hyp] + row[text::kEos], static_cast<std::int32_t>(hyp), text::kEos});
          continue;
        }
        for (std::int32_t w = 0; w < V; ++w) {
          if (w == text::kPad || w == text::kBos) continue;
          candidates.push_back({score[hyp] + row[w], static_cast<std::int32_t>(hyp), w});
        }
      }
      const std::size_t keep = std::min<std::size_t>(candidates.size(), static_cast<std::size_t>(2 * K));
      auto better = [](const Candidate& x, const Candidate& y) {
        if (x.score != y.score) return x.score > y.score;
        if (x.hyp != y.hyp) return x.hyp < y.hyp;
        return x.word < y.word;
      };
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                        better);
      std::int64_t next_k = 0;
      for (std::size_t c = 0; c < keep; ++c) {
        const Candidate& cand = candidates[c];
        if (cand.word == text::kEos) {
          // fairseq's rule: an </s> finishes a hypothesis only from the first K of the 2K ranks (so beam 1
          // is greedy); further down it is dropped, as a continuation it is not.
          if (static_cast<std::int64_t>(c) < K && static_cast<std::int64_t>(finished[b].size()) < K) {
            Hypothesis h;
            h.tokens = prefix[cand.hyp];
            h.logprob = cand.score;
            h.score = cand.score / std::pow(static_cast<float>(h.tokens.size() + 1), options.lenpen);
            finished[b].push_back(std::move(h));
          }
          continue;
        }
        if (next_k == K) continue;
        const std::int64_t slot = b * K + next_k++;
        order[slot] = cand.hyp;
        next_prefix[slot] = prefix[cand.hyp];
        next_prefix[slot].push_back(cand.word);
        next_score[slot] = cand.score;
        tokens[slot] = cand.word;
      }
      if (static_cast<std::int64_t>(finished[b].size()) >= K || force_end) {
        done[b] = true;
        --remaining;
        for (std::int64_t k = 0; k < K; ++k) next_score[b * K + k] = kNegInf;
      }
    }
    prefix.swap(next_prefix);
    score.swap(next_score);
    if (remaining > 0) model.reorder(e.state, order);
  }

  std::vector<std::vector<Hypothesis>> out(static_cast<std::size_t>(B));
  const std::size_t nbest = static_cast<std::size_t>(std::clamp<std::int64_t>(options.nbest, 1, K));
  for (std::int64_t b = 0; b < B; ++b) {
    auto& f = finished[b];
    std::stable_sort(f.begin(), f.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    f.resize(std::min(f.size(), nbest));
    out[b] = std::move(f);
  }
  return out;
}

}  // namespace attn::decode
