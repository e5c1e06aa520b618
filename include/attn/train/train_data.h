// The sentence pairs of a training session: read before any work (a bad
// corpus fails before anything is written), encoded once the BPE is known,
// and with --join-pairs K or --drop-final-stop each epoch's examples made anew
// (train/joined_pairs.h), with --join-pairs beside a validation set joined K
// sentences at a time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/text/bpe.h"
#include "attn/train/corpus.h"
#include "attn/train/joined_pairs.h"
#include "attn/train/train_log.h"

namespace attn::train {

struct TrainOptions;

class TrainData {
 public:
  // Reads the training and validation files; throws Error on a bad corpus.
  void read(const TrainOptions& options);
  // Encodes the pairs with `bpe`, saying in `log` what was skipped. Throws
  // Error when no training pair is usable.
  void encode(const TrainOptions& options, const text::Bpe& bpe, TrainLog& log);

  const ParallelText& train_text() const { return train_text_; }
  // The examples of `epoch`: the training pairs, or those made for that epoch
  // (joined, stops dropped: a pure function of seed and epoch).
  const std::vector<Example>& begin_epoch(std::int64_t epoch);
  const std::vector<Example>& epoch_examples() const { return shape_.reshapes() ? reshaped_ : train_.examples; }

  const EncodedCorpus& valid() const { return valid_; }
  const std::vector<std::string>& valid_references() const { return valid_text_.tgt; }
  // Empty without --join-pairs, or when no group of K pairs fits within --max-len.
  const EncodedCorpus& valid_joined() const { return valid_joined_; }
  const std::vector<std::string>& valid_joined_references() const { return valid_joined_text_.tgt; }

 private:
  std::uint64_t seed_ = 0;
  ParallelText train_text_, valid_text_, valid_joined_text_;
  EncodedCorpus train_, valid_, valid_joined_;
  EpochShape shape_;               // how an epoch's examples are made from train_
  std::vector<Example> reshaped_;  // this epoch's examples, when shape_ reshapes train_
};

}  // namespace attn::train
