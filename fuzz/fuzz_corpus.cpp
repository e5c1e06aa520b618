// The corpus reader: any two files given to `attn train` as source and target
// are read and encoded, or refused with attn::Error; nothing else may happen.
// Input: the source file's bytes, "\n\x01\n", the target file's bytes.
#include <cstdlib>

#include "attn/core/error.h"
#include "attn/train/corpus.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const auto [src_bytes, tgt_bytes] = fuzz::split_once(fuzz::as_text(data, size), "\n\x01\n");
  const auto src = fuzz::write_scratch("corpus.src", src_bytes);
  const auto tgt = fuzz::write_scratch("corpus.tgt", tgt_bytes);
  try {
    const train::ParallelText text = train::read_parallel(src, tgt);
    if (text.src.size() != text.tgt.size() || text.src.empty()) std::abort();
    for (std::int64_t max_len : {0, 3}) {
      const train::EncodedCorpus encoded = train::encode_corpus(text, fuzz::tiny_bpe(), max_len);
      const std::size_t accounted = encoded.examples.size() + static_cast<std::size_t>(encoded.skipped_empty) +
                                    static_cast<std::size_t>(encoded.skipped_long);
      if (accounted != text.src.size() || encoded.line.size() != encoded.examples.size()) std::abort();
      for (const train::Example& e : encoded.examples)
        if (e.src.empty() || e.tgt.empty() ||
            (max_len > 0 && (std::ssize(e.src) > max_len || std::ssize(e.tgt) > max_len)))
          std::abort();
    }
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
