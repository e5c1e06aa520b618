#include "attn/cli/greedy_validation.h"

#include "attn/decode/search.h"

namespace attn::cli {

namespace {

class GreedyValidationTranslator final : public train::ValidationTranslator {
 public:
  std::vector<std::vector<std::int32_t>> translate(
      nn::StepContext& ctx, const model::Seq2Seq& model,
      const std::vector<std::vector<std::int32_t>>& sources) const override {
    decode::SearchOptions search;
    search.beam = 1;
    std::vector<decode::Hypothesis> found = decode::greedy_search(ctx, model, sources, search);
    std::vector<std::vector<std::int32_t>> hypotheses;
    hypotheses.reserve(found.size());
    for (decode::Hypothesis& h : found) hypotheses.push_back(std::move(h.tokens));
    return hypotheses;
  }
};

}  // namespace

const train::ValidationTranslator& greedy_validation_translator() {
  static const GreedyValidationTranslator translator;
  return translator;
}

}  // namespace attn::cli
