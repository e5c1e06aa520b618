// The BPE encoder on any bytes: every id is in the vocabulary, and for valid
// UTF-8 the text survives a round trip up to whitespace normalisation, so a
// second round trip changes nothing.
#include <cstdlib>

#include "attn/text/utf8.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const text::Bpe& bpe = fuzz::tiny_bpe();
  const std::string_view line = fuzz::as_text(data, size);
  const std::vector<std::int32_t> ids = bpe.encode(line);
  for (std::int32_t id : ids)
    if (id < 0 || id >= bpe.vocab().size()) std::abort();
  if (bpe.encode_pieces(line).size() != ids.size()) std::abort();
  const std::string once = bpe.decode(ids);
  if (text::valid_utf8(line)) {
    if (!text::valid_utf8(once)) std::abort();
    if (bpe.decode(bpe.encode(once)) != once) std::abort();
  }
  return 0;
}
