#include "attn/text/pretokenizer.h"

namespace attn::text {

std::vector<PreToken> pretokenize(std::string_view line) {
  std::vector<PreToken> tokens;
  for_each_pretoken(line, [&](const PreToken& token) { tokens.push_back(token); });
  return tokens;
}

}  // namespace attn::text
