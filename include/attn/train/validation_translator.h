// How validation turns the validation sources into hypotheses for its BLEU.
// The trainer asks the question; the search that answers it belongs to decode,
// a layer above train, so the caller (the cli) hands the trainer an answer.
#pragma once
#include <cstdint>
#include <vector>

namespace attn::nn {
struct StepContext;
}
namespace attn::model {
class Seq2Seq;
}

namespace attn::train {

class ValidationTranslator {
 public:
  virtual ~ValidationTranslator() = default;
  // One hypothesis per source, in order: subword ids without <s> and </s>.
  // ctx is in eval mode and its arena is free for the search.
  virtual std::vector<std::vector<std::int32_t>> translate(
      nn::StepContext& ctx, const model::Seq2Seq& model,
      const std::vector<std::vector<std::int32_t>>& sources) const = 0;
};

}  // namespace attn::train
