#include "attn/decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "attn/kernels/elementwise.h"
#include "attn/text/vocab.h"

namespace attn::decode {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::int32_t kChunk = 64;  // words best_candidates skips at once

std::int64_t max_target_len(const SearchOptions& o, std::int64_t src_len, std::int64_t max_positions) {
  const auto len = static_cast<std::int64_t>(o.max_len_a * static_cast<float>(src_len) + o.max_len_b);
  return std::clamp<std::int64_t>(len, 1, max_positions - 1);
}

// What a search keeps from one batch to the next on its thread: the decoder
// state's arena, its caches' length and the log-probabilities. Allocated
// afresh per batch, their pages were faulted in and cleared again each time:
// 41% of int8 beam-search time (perf, test2016 at batch 64) went to the kernel
// clearing pages.
struct SearchBuffers {
  Arena state;
  std::vector<float> logprobs;
  std::int64_t cache_positions = 1;  // the decoder caches' t_max in the last batch
  std::int64_t cache_rows = 0;       // the largest hypotheses · t_max so far
};
SearchBuffers& search_buffers() {
  thread_local SearchBuffers buffers;
  buffers.state.reset();
  return buffers;
}

// The encoder over a batch, and the decoder started on its memory with `beams` hypotheses per sentence.
struct Encoded {
  model::Batch batch;
  model::DecoderState state;
  std::vector<std::int64_t> max_len;  // [B]
};

Encoded encode_batch(nn::StepContext& ctx, SearchBuffers& buffers, const model::Seq2Seq& model,
                     const std::vector<std::vector<std::int32_t>>& sources, std::int64_t beams,
                     const SearchOptions& options) {
  Encoded e;
  e.batch = model::make_batch(sources, {});
  const std::int64_t B = e.batch.size, ts = e.batch.src_len;
  const float* memory = model.encode(ctx, e.batch.src.data(), B, ts, e.batch.src_lengths.data());  // [B·Ts, d]
  std::int64_t t_max = 1;
  for (std::int64_t b = 0; b < B; ++b) {
    e.max_len.push_back(max_target_len(options, e.batch.src_lengths[b], model.config().max_positions));
    t_max = std::max(t_max, e.max_len.back() + 1);
  }
  // The caches keep the last batch's length when it fits the largest caches so far: batches come
  // longest first, and with an unchanged row stride a later batch writes pages already faulted in
  // (each shorter stride moved the rows onto fresh pages: 1 in 3 page faults of a test2016 run).
  // Only a length, so it never reserves more than a batch needed before.
  if (B * beams * std::max(t_max, buffers.cache_positions) <= buffers.cache_rows)
    t_max = std::max(t_max, buffers.cache_positions);
  buffers.cache_positions = t_max;
  buffers.cache_rows = std::max(buffers.cache_rows, B * beams * t_max);
  e.state = model.start_decoding(ctx, buffers.state, memory, B, beams, ts, e.batch.src_lengths.data(), t_max);
  return e;
}

// Keeps entries keep[0] < keep[1] < … of v, in that order.
template <typename T>
void keep_entries(std::vector<T>& v, const std::vector<std::int32_t>& keep) {
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (static_cast<std::size_t>(keep[i]) != i) v[i] = std::move(v[keep[i]]);
  v.resize(keep.size());
}

// The positions in `live` of the sentences options.drop keeps, their rows in a
// state of `beams` rows per sentence, and the sentences it drops; empty when it drops none.
struct Kept {
  std::vector<std::int32_t> sentences, rows, dropped;
};
std::optional<Kept> kept_after_drops(const std::vector<std::int32_t>& live, std::int64_t beams,
                                     const SearchOptions& options) {
  if (!options.drop) return std::nullopt;
  Kept kept;
  for (std::size_t s = 0; s < live.size(); ++s) {
    if (options.drop(static_cast<std::size_t>(live[s]))) {
      kept.dropped.push_back(live[s]);
      continue;
    }
    kept.sentences.push_back(static_cast<std::int32_t>(s));
    for (std::int64_t k = 0; k < beams; ++k)
      kept.rows.push_back(static_cast<std::int32_t>(static_cast<std::int64_t>(s) * beams + k));
  }
  if (kept.dropped.empty()) return std::nullopt;
  return kept;
}

}  // namespace

std::vector<Candidate> best_candidates(std::span<const float> logprobs, std::span<const float> scores,
                                       std::int64_t vocab, std::size_t count) {
  // One list of the first `count` so far, over all rows: a word that cannot
  // enter it now never will. Rows come in beam order, the best hypothesis
  // first, so from the second row on the floor is already high and most of
  // each row is skipped a chunk at a time (with a list per row, each row
  // scanned until its own list filled: the scan was 7.5% of int8 search).
  std::vector<Candidate> best;
  if (count == 0) return best;
  best.reserve(count + 1);
  float floor = kNegInf;  // the last kept score once the list is full
  bool full = false;
  for (std::size_t h = 0; h < scores.size(); ++h) {
    const float base = scores[h];
    if (base == kNegInf) continue;
    const float* row = logprobs.data() + static_cast<std::int64_t>(h) * vocab;
    for (std::int32_t w = 0; w < vocab; ++w) {
      // A chunk whose largest word cannot pass the floor is skipped whole
      // (base + x rounds monotonically in x, so the test is exact; a NaN
      // maximum scans the chunk).
      if (full && w % kChunk == 0 && vocab - w >= kChunk && base + kernels::max_value(row + w, kChunk) <= floor) {
        w += kChunk - 1;
        continue;
      }
      const float score = base + row[w];
      // Candidates come in beam order (row, then word), so a tie ranks after what is kept.
      if ((full && !(score > floor)) || w == text::kPad || w == text::kBos) continue;
      const auto at = std::find_if(best.begin(), best.end(), [&](const Candidate& c) { return c.score < score; });
      best.insert(at, {score, static_cast<std::int32_t>(h), w});
      if (best.size() > count) best.pop_back();
      full = best.size() == count;
      floor = best.back().score;
    }
  }
  return best;
}

void block_repeated_ngrams(std::span<const std::int32_t> prefix, int n, std::span<float> row) {
  if (n <= 0 || prefix.size() < static_cast<std::size_t>(n - 1)) return;
  const std::size_t g = static_cast<std::size_t>(n - 1);  // the n-gram's first n-1 tokens
  const auto last = prefix.subspan(prefix.size() - g);
  for (std::size_t i = 0; i + g < prefix.size(); ++i)
    if (std::equal(last.begin(), last.end(), prefix.begin() + static_cast<std::ptrdiff_t>(i))) {
      const std::int32_t word = prefix[i + g];
      if (word >= 0 && static_cast<std::size_t>(word) < row.size()) row[static_cast<std::size_t>(word)] = kNegInf;
    }
}

std::vector<Hypothesis> greedy_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                      const std::vector<std::vector<std::int32_t>>& sources,
                                      const SearchOptions& options) {
  SearchBuffers& buffers = search_buffers();
  Encoded e = encode_batch(ctx, buffers, model, sources, 1, options);
  const std::int64_t B = e.batch.size, V = model.config().vocab_size;
  std::vector<Hypothesis> out(static_cast<std::size_t>(B));
  // Row s of the state decodes sentence live[s]; a finished sentence leaves the state.
  std::vector<std::int32_t> live(static_cast<std::size_t>(B));
  std::iota(live.begin(), live.end(), 0);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(B), text::kBos);
  std::vector<float>& logprobs = buffers.logprobs;
  for (std::int64_t t = 0; !live.empty(); ++t) {
    if (options.stop && options.stop()) throw Cancelled();
    if (const auto kept = kept_after_drops(live, 1, options); kept) {
      for (std::int32_t b : kept->dropped) out[b] = {};
      keep_entries(live, kept->sentences);
      keep_entries(tokens, kept->rows);
      if (live.empty()) break;
      model.select(e.state, kept->rows);
    }
    const std::int64_t S = static_cast<std::int64_t>(live.size());
    ctx.arena.reset();
    logprobs.resize(static_cast<std::size_t>(S * V));
    model.decode_step(ctx, e.state, tokens.data(), logprobs.data());
    std::vector<std::int32_t> continuing;  // rows of the sentences not finished
    for (std::int64_t s = 0; s < S; ++s) {
      Hypothesis& h = out[live[s]];
      float* row = logprobs.data() + s * V;
      block_repeated_ngrams(h.tokens, options.no_repeat_ngram, {row, static_cast<std::size_t>(V)});
      std::int32_t best = text::kEos;  // never <pad> or <s>, as in beam search
      for (std::int32_t w = 0; w < V; ++w)
        if (w != text::kPad && w != text::kBos && row[w] > row[best]) best = w;
      if (t >= e.max_len[live[s]]) best = text::kEos;  // forced end, as beam search does
      h.logprob += row[best];
      if (best == text::kEos) {
        h.score = h.logprob / std::pow(static_cast<float>(h.tokens.size() + 1), options.lenpen);
        continue;
      }
      h.tokens.push_back(best);
      tokens[s] = best;
      continuing.push_back(static_cast<std::int32_t>(s));
    }
    if (continuing.size() == live.size()) continue;
    keep_entries(live, continuing);
    keep_entries(tokens, continuing);
    if (!live.empty()) model.select(e.state, continuing);
  }
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& options, const SentenceDone& on_done) {
  const std::int64_t K = std::max(1, options.beam);
  const std::size_t nbest = static_cast<std::size_t>(std::clamp<std::int64_t>(options.nbest, 1, K));
  SearchBuffers& buffers = search_buffers();
  Encoded e = encode_batch(ctx, buffers, model, sources, K, options);
  const std::int64_t B = e.batch.size, V = model.config().vocab_size;

  // Row s·K + k of the state is beam k of sentence live[s]; a finished sentence leaves the state.
  std::vector<std::int32_t> live(static_cast<std::size_t>(B));
  std::iota(live.begin(), live.end(), 0);
  std::vector<std::vector<std::int32_t>> prefix(static_cast<std::size_t>(B * K));
  std::vector<float> score(static_cast<std::size_t>(B * K), kNegInf);
  for (std::int64_t b = 0; b < B; ++b) score[b * K] = 0.0f;  // only one beam starts
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(B * K), text::kBos);
  std::vector<std::vector<Hypothesis>> finished(static_cast<std::size_t>(B));
  std::vector<float>& logprobs = buffers.logprobs;
  for (std::int64_t t = 0; !live.empty(); ++t) {
    if (options.stop && options.stop()) throw Cancelled();
    if (const auto kept = kept_after_drops(live, K, options); kept) {
      for (std::int32_t b : kept->dropped) finished[b].clear();
      keep_entries(live, kept->sentences);
      keep_entries(prefix, kept->rows);
      keep_entries(score, kept->rows);
      keep_entries(tokens, kept->rows);
      if (live.empty()) break;
      model.select(e.state, kept->rows);
    }
    const std::int64_t S = static_cast<std::int64_t>(live.size()), N = S * K;
    ctx.arena.reset();
    logprobs.resize(static_cast<std::size_t>(N * V));
    model.decode_step(ctx, e.state, tokens.data(), logprobs.data());
    std::vector<std::int32_t> order(static_cast<std::size_t>(N));  // back-pointers: row i continues order[i]
    std::vector<std::vector<std::int32_t>> next_prefix(static_cast<std::size_t>(N));
    std::vector<float> next_score(static_cast<std::size_t>(N), kNegInf);
    std::vector<std::int32_t> next_tokens(static_cast<std::size_t>(N), text::kEos);  // a dead beam feeds any word
    std::vector<char> done(static_cast<std::size_t>(S), 0);
    // Sentences are independent: each writes only its own rows and finished list.
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t s = 0; s < S; ++s) {
      const std::int32_t b = live[s];
      const std::int64_t first = s * K;  // the sentence's first row
      const bool force_end = t >= e.max_len[b];
      std::vector<Candidate> candidates;  // the best 2K (beam, word) pairs of this sentence, in beam order
      if (force_end) {
        for (std::int32_t k = 0; k < K; ++k)
          if (score[first + k] != kNegInf)
            candidates.push_back({score[first + k] + logprobs[(first + k) * V + text::kEos], k, text::kEos});
        std::sort(candidates.begin(), candidates.end(), ranks_before);
      } else {
        for (std::int64_t k = 0; k < K && options.no_repeat_ngram > 0; ++k)
          block_repeated_ngrams(prefix[first + k], options.no_repeat_ngram,
                                {logprobs.data() + (first + k) * V, static_cast<std::size_t>(V)});
        candidates = best_candidates({logprobs.data() + first * V, static_cast<std::size_t>(K * V)},
                                     {score.data() + first, static_cast<std::size_t>(K)}, V,
                                     static_cast<std::size_t>(2 * K));
      }
      for (std::int64_t k = 0; k < K; ++k) order[first + k] = static_cast<std::int32_t>(first + k);
      std::int64_t next_k = 0;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        const Candidate& cand = candidates[c];
        const std::int64_t from = first + cand.hyp;
        if (cand.word == text::kEos) {
          // fairseq's rule: an </s> finishes a hypothesis only from the first K of the 2K ranks (so beam 1
          // is greedy); further down it is dropped, as a continuation it is not.
          if (static_cast<std::int64_t>(c) < K && static_cast<std::int64_t>(finished[b].size()) < K) {
            Hypothesis h;
            h.tokens = prefix[from];
            h.logprob = cand.score;
            h.score = cand.score / std::pow(static_cast<float>(h.tokens.size() + 1), options.lenpen);
            finished[b].push_back(std::move(h));
          }
          continue;
        }
        if (next_k == K) continue;
        const std::int64_t slot = first + next_k++;
        order[slot] = static_cast<std::int32_t>(from);
        next_prefix[slot] = prefix[from];
        next_prefix[slot].push_back(cand.word);
        next_score[slot] = cand.score;
        next_tokens[slot] = cand.word;
      }
      done[s] = static_cast<std::int64_t>(finished[b].size()) >= K || force_end;
    }
    prefix.swap(next_prefix);
    score.swap(next_score);
    tokens.swap(next_tokens);
    std::vector<std::int32_t> kept_sentences, kept_rows;
    for (std::int64_t s = 0; s < S; ++s) {
      if (done[s]) {
        // The sentence's final list: best first, nbest kept.
        auto& f = finished[live[s]];
        std::stable_sort(f.begin(), f.end(),
                         [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
        f.resize(std::min(f.size(), nbest));
        if (on_done) on_done(static_cast<std::size_t>(live[s]), f);
        continue;
      }
      kept_sentences.push_back(static_cast<std::int32_t>(s));
      for (std::int64_t k = 0; k < K; ++k) kept_rows.push_back(static_cast<std::int32_t>(s * K + k));
    }
    if (kept_sentences.empty()) break;
    keep_entries(live, kept_sentences);
    keep_entries(order, kept_rows);
    keep_entries(prefix, kept_rows);
    keep_entries(score, kept_rows);
    keep_entries(tokens, kept_rows);
    model.select(e.state, order);
  }

  return finished;  // every sentence left the search through the done branch above
}

}  // namespace attn::decode
