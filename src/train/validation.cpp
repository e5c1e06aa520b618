#include "attn/train/validation.h"

#include "attn/core/rng.h"
#include "attn/eval/bleu.h"
#include "attn/nn/context.h"
#include "attn/train/batching.h"

namespace attn::train {

ValidationScores score_validation(Communicator& comm, model::Seq2Seq& model, const ValidationTranslator& translator,
                                  const text::Bpe& bpe, const EncodedCorpus& valid,
                                  const std::vector<std::string>& references, float label_smoothing,
                                  std::int64_t max_tokens, Arena& arena) {
  Rng rng(0);
  nn::StepContext ctx{model.params(), arena, rng, false};
  double sums[3] = {0.0, 0.0, 0.0};  // loss, nll, tokens
  std::string mine;                  // "index length text" for each of this rank's sentences
  const auto batches = plan_batches(valid.examples, max_tokens, 0, 0, false);
  for (std::size_t b = static_cast<std::size_t>(comm.rank()); b < batches.size();
       b += static_cast<std::size_t>(comm.size())) {
    const BatchIndices& indices = batches[b];
    arena.reset();
    const model::Batch batch = gather_batch(valid.examples, indices);
    const nn::LossSums loss = model.forward_backward(ctx, batch, label_smoothing, false, 0.0f);
    sums[0] += loss.loss;
    sums[1] += loss.nll;
    sums[2] += static_cast<double>(loss.tokens);
    std::vector<std::vector<std::int32_t>> sources;
    for (std::int64_t i : indices) sources.push_back(valid.examples[i].src);
    arena.reset();
    const auto hyps = translator.translate(ctx, model, sources);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const std::string text = bpe.decode(hyps[k]);  // any bytes: length-prefixed
      mine += std::to_string(indices[k]) + ' ' + std::to_string(text.size()) + ' ' + text;
    }
  }
  comm.sum(sums);
  ValidationScores v;
  v.loss = sums[2] > 0 ? sums[0] / sums[2] : 0.0;
  v.nll = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  double bleu[1] = {0.0};
  const std::vector<std::string> parts = comm.gather(mine);
  if (comm.is_root()) {
    std::vector<std::string> hypotheses(valid.examples.size());
    for (const std::string& part : parts) {
      std::size_t at = 0;
      while (at < part.size()) {
        const std::size_t space = part.find(' ', at), second = part.find(' ', space + 1);
        const std::size_t index = std::stoull(part.substr(at, space - at));
        const std::size_t length = std::stoull(part.substr(space + 1, second - space - 1));
        hypotheses[index] = part.substr(second + 1, length);
        at = second + 1 + length;
      }
    }
    std::vector<std::string> refs;
    for (std::int64_t line : valid.line) refs.push_back(references[static_cast<std::size_t>(line)]);
    const std::vector<std::vector<std::string>> streams{refs};
    bleu[0] = eval::Bleu().corpus_score(hypotheses, streams).score;
  }
  comm.sum(bleu);  // rank 0's score to every rank
  v.bleu = bleu[0];
  return v;
}

}  // namespace attn::train
