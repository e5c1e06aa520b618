// The sentences a command works on: read from a file or stdin and turned into
// subword ids with the model's BPE. Shared by translate and attend, so both
// read, warn and truncate the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/text/bpe.h"

namespace attn::cli {

// Every line of `path` ("" or "-": stdin), CR and a leading BOM dropped.
// Read tolerantly: invalid UTF-8 goes through the BPE's byte fallback, so
// every line still gets its output. Throws Error when the file is missing.
std::vector<std::string> read_input(const std::string& path);

// Encodes every line. Lines longer than max_len subwords are truncated; one
// warning on stderr counts them (naming `flag`, the option that raises the
// limit), another counts lines that are not valid UTF-8. `what` names the
// units counted in the warnings ("input lines", "input sentences", "target lines").
std::vector<std::vector<std::int32_t>> encode_lines(const text::Bpe& bpe, const std::vector<std::string>& lines,
                                                    std::int64_t max_len, const std::string& what,
                                                    const std::string& flag);

}  // namespace attn::cli
