#include "attn/train/train_data.h"

#include "attn/core/error.h"
#include "attn/train/joined_pairs.h"
#include "attn/train/trainer.h"

namespace attn::train {

void TrainData::read(const TrainOptions& o) {
  seed_ = o.seed;
  train_text_ = read_parallel(o.train_src, o.train_tgt, "training");
  valid_text_ = read_parallel(o.valid_src, o.valid_tgt, "validation");
}

void TrainData::encode(const TrainOptions& o, const text::Bpe& bpe, TrainLog& log) {
  train_ = encode_corpus(train_text_, bpe, o.max_len);
  valid_ = encode_corpus(valid_text_, bpe, o.max_len);
  shape_ = EpochShape{o.join_pairs, o.max_len, o.drop_final_stop, final_stop_ids(bpe)};
  if (o.join_pairs > 1) {
    valid_joined_text_ = join_lines(valid_text_, o.join_pairs);
    valid_joined_ = encode_corpus(valid_joined_text_, bpe, o.max_len);
    if (valid_joined_.examples.empty())
      log.message("valid: no joined validation (fewer than " + std::to_string(o.join_pairs) +
                  " usable pairs joined within --max-len)");
  }
  require(!train_.examples.empty(),
          o.train_src.string() + ": no usable sentence pairs (all empty or longer than --max-len)");
  if (train_.skipped_empty || train_.skipped_long)
    log.message("train: skipped " + std::to_string(train_.skipped_empty) + " pairs with an empty side and " +
                std::to_string(train_.skipped_long) + " longer than --max-len " + std::to_string(o.max_len));
}

const std::vector<Example>& TrainData::begin_epoch(std::int64_t epoch) {
  if (shape_.reshapes()) reshaped_ = join_pairs(train_, shape_, seed_, epoch);
  return epoch_examples();
}

}  // namespace attn::train
