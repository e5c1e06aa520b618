// Greedy and batched beam search over the incremental decoder, fairseq-style:
// each step keeps the best 2·beam candidates per sentence, finishes those that
// end in </s>, continues with the best `beam` others, and stops a sentence
// once `beam` hypotheses have finished. Scores are sums of log-probabilities
// (</s> included) divided by length^lenpen.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <vector>

#include "attn/model/seq2seq.h"
#include "attn/nn/context.h"

namespace attn::decode {

struct SearchOptions {
  int beam = 5;
  float lenpen = 1.0f;
  // A hypothesis has at most max_len_a · source_length + max_len_b tokens
  // (</s> excluded), and never more than the model's positions allow.
  float max_len_a = 2.0f;
  float max_len_b = 10.0f;
  int nbest = 1;
  // fairseq's --no-repeat-ngram-size: when n > 0, no hypothesis repeats an
  // n-gram of its own tokens (</s> is never blocked). 0: off.
  int no_repeat_ngram = 0;
  // Asked before every step when set: true ends the search by throwing
  // Cancelled (a server whose client left or whose deadline passed).
  std::function<bool()> stop;
  // Asked for each sentence still searched before every step when set: true
  // drops it (index into sources) from the search: its rows leave the state
  // and its caches, it is never reported and its result stays empty. A server
  // drops the sentences whose client left from a batch shared with others.
  std::function<bool(std::size_t sentence)> drop;
};

// Thrown by a search whose `stop` said so.
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "the search was cancelled"; }
};

struct Hypothesis {
  std::vector<std::int32_t> tokens;  // without </s>
  float score = 0.0f;                // normalised: Σ log p / length^lenpen
  float logprob = 0.0f;              // Σ log p, </s> included
};

using Hypotheses = std::vector<Hypothesis>;  // one sentence's n best, best first

// Called once per sentence, in the step the sentence leaves the search, with its
// final hypotheses (index into sources): a server answers a request as soon as its
// sentences are done instead of when the batch's longest one is.
using SentenceDone = std::function<void(std::size_t sentence, const std::vector<Hypothesis>& best)>;

// sources: token ids without specials. Returns, per sentence, min(nbest, beam)
// hypotheses, best first. beam == 1 is greedy search.
std::vector<std::vector<Hypothesis>> beam_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& options, const SentenceDone& on_done = {});

// An extension of hypothesis `hyp` by `word`, scored by the sum of their log-probabilities.
struct Candidate {
  float score;
  std::int32_t hyp, word;
};

// Beam order: higher score first, ties to the lower hypothesis, then the lower word.
inline bool ranks_before(const Candidate& x, const Candidate& y) {
  if (x.score != y.score) return x.score > y.score;
  if (x.hyp != y.hyp) return x.hyp < y.hyp;
  return x.word < y.word;
}

// The first `count` in beam order of the candidates (h, w), score scores[h] +
// logprobs[h·V + w], over hypotheses h with a finite score and words w other
// than <pad> and <s>: what sorting all of them would keep, found in one pass
// without storing the H·V candidates. logprobs: [H, V], scores: [H].
std::vector<Candidate> best_candidates(std::span<const float> logprobs, std::span<const float> scores,
                                       std::int64_t vocab, std::size_t count);

// Sets to -inf, in `row` (one hypothesis's log-probabilities over the
// vocabulary), every word that would complete an n-gram already in `prefix`
// (the hypothesis's tokens, </s> excluded): with g the last n-1 tokens, each
// word that followed g earlier. n <= 0 blocks nothing.
void block_repeated_ngrams(std::span<const std::int32_t> prefix, int n, std::span<float> row);

// Argmax at every step; the reference that beam 1 must equal.
std::vector<Hypothesis> greedy_search(nn::StepContext& ctx, const model::Seq2Seq& model,
                                      const std::vector<std::vector<std::int32_t>>& sources,
                                      const SearchOptions& options);

}  // namespace attn::decode
