// Loss and BLEU on a validation set, as one training validation computes
// them on every rank.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/arena.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"
#include "attn/train/communicator.h"
#include "attn/train/corpus.h"
#include "attn/train/validation_translator.h"

namespace attn::train {

struct ValidationScores {
  double loss = 0.0, nll = 0.0;  // per target token
  double bleu = 0.0;             // corpus BLEU of `translator`'s hypotheses
};

// With several ranks each takes every size-th batch; the sums and the
// hypotheses meet on rank 0, which scores BLEU, and every rank gets the same
// numbers back. references: by line of the text `valid` was encoded from.
// arena: the training step's, free between updates (a fresh one would fault
// its pages in again at every validation).
ValidationScores score_validation(Communicator& comm, model::Seq2Seq& model, const ValidationTranslator& translator,
                                  const text::Bpe& bpe, const EncodedCorpus& valid,
                                  const std::vector<std::string>& references, float label_smoothing,
                                  std::int64_t max_tokens, Arena& arena);

}  // namespace attn::train
