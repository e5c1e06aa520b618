// gzip-compressed text read as its content. Every text attn reads (training
// corpora, translate/attend inputs, score's references and hypotheses) goes
// through here, so `.gz` files work anywhere: detected by gzip's magic bytes
// (1f 8b), not by the name; concatenated members are read on, as gzip does.
#pragma once
#include <string>

namespace attn::text {

// True when `content` starts with gzip's magic bytes.
bool is_gzip(const std::string& content);

// `content` decompressed when is_gzip(content), otherwise returned as is.
// Throws Error naming `origin` when the compressed data is damaged or cut.
std::string decompress_if_gzip(std::string content, const std::string& origin);

}  // namespace attn::text
