// Parallel corpora: reading, checking and encoding sentence pairs.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attn/text/bpe.h"

namespace attn::train {

struct ParallelText {
  std::vector<std::string> src, tgt;
};

// Reads two line-aligned files. Throws Error naming both files and both line
// counts when they differ, and when the corpus is empty (naming `role`,
// "training" or "validation").
ParallelText read_parallel(const std::filesystem::path& src, const std::filesystem::path& tgt, const std::string& role);

struct Example {
  std::vector<std::int32_t> src, tgt;  // BPE ids, no specials
};

struct EncodedCorpus {
  std::vector<Example> examples;
  std::vector<std::int64_t> line;  // examples[i] came from line line[i] (0-based)
  std::int64_t skipped_empty = 0;  // pairs with an empty side
  std::int64_t skipped_long = 0;   // pairs with a side longer than max_len tokens
};

// Encodes every pair; pairs with an empty side or a side longer than max_len
// subwords are skipped and counted (max_len ≤ 0: no limit).
EncodedCorpus encode_corpus(const ParallelText& text, const text::Bpe& bpe, std::int64_t max_len);

}  // namespace attn::train
