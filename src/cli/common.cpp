#include <CLI/CLI.hpp>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/decode/search.h"

namespace attn::cli {

void add_common_options(CLI::App& sub, CommonOptions& common) {
  sub.add_option("--threads", common.threads, "OpenMP threads (default: all cores)")->check(bounded(within(0, 4096)));
}

void add_search_options(CLI::App& sub, decode::SearchOptions& search) {
  sub.add_option("--beam", search.beam, "beam size (1: greedy)")
      ->capture_default_str()
      ->check(bounded(within(1, 1000)));
  sub.add_option("--lenpen", search.lenpen, "length penalty: scores are divided by length^lenpen")
      ->capture_default_str()
      ->check(bounded(within(0, 10)));
  sub.add_option("--max-len-a", search.max_len_a, "output length limit a·source_length + b")
      ->capture_default_str()
      ->check(bounded(within(0, 1000)));
  sub.add_option("--max-len-b", search.max_len_b, "output length limit a·source_length + b")
      ->capture_default_str()
      ->check(bounded(within(0, 100000)));
  sub.add_option("--no-repeat-ngram-size", search.no_repeat_ngram,
                 "no output repeats an n-gram (of subwords) of its own, as fairseq's flag; 0: off")
      ->capture_default_str()
      ->check(bounded(within(0, 1000)));
}

void add_compute_type_option(CLI::App& sub, std::string& compute_type) {
  sub.add_option("--compute-type", compute_type,
                 "precision of the matrix products: fp32; bf16 (operands rounded to bf16, FP32 sums); int8 (weights "
                 "quantized per output row, activations per row, int32 sums; attention and softmax stay FP32)")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
      ->capture_default_str();
}

model::ComputeType compute_type_for(const std::string& compute_type) {
  if (const auto type = model::parse_compute_type(compute_type)) return *type;
  throw Error("--compute-type " + compute_type + " is not a compute type; use fp32, bf16 or int8");
}

void check_search_options(const decode::SearchOptions& search) {
  require(search.max_len_a > 0.0f || search.max_len_b >= 1.0f,
          "--max-len-a 0 with --max-len-b below 1 leaves no room for any output word; raise either");
}

}  // namespace attn::cli
