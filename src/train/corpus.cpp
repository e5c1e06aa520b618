#include "attn/train/corpus.h"

#include "attn/core/error.h"
#include "attn/text/text_file.h"

namespace attn::train {

ParallelText read_parallel(const std::filesystem::path& src, const std::filesystem::path& tgt,
                           const std::string& role) {
  ParallelText text{text::read_lines(src), text::read_lines(tgt)};
  if (text.src.size() != text.tgt.size())
    throw Error(src.string() + " has " + std::to_string(text.src.size()) + " lines but " + tgt.string() + " has " +
                std::to_string(text.tgt.size()) + "; line i of one must translate line i of the other");
  if (text.src.empty())
    throw Error(src.string() + " and " + tgt.string() + " are empty; the " + role +
                " set needs at least one sentence pair");
  return text;
}

EncodedCorpus encode_corpus(const ParallelText& text, const text::Bpe& bpe, std::int64_t max_len) {
  EncodedCorpus corpus;
  const std::size_t n = text.src.size();
  std::vector<Example> all(n);
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t i = 0; i < n; ++i) all[i] = {bpe.encode(text.src[i]), bpe.encode(text.tgt[i])};
  for (std::size_t i = 0; i < n; ++i) {
    Example& e = all[i];
    if (e.src.empty() || e.tgt.empty()) {
      ++corpus.skipped_empty;
      continue;
    }
    if (max_len > 0 &&
        (static_cast<std::int64_t>(e.src.size()) > max_len || static_cast<std::int64_t>(e.tgt.size()) > max_len)) {
      ++corpus.skipped_long;
      continue;
    }
    corpus.examples.push_back(std::move(e));
    corpus.line.push_back(static_cast<std::int64_t>(i));
  }
  return corpus;
}

}  // namespace attn::train
