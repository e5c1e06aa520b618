#include "attn/text/vocab.h"

#include <cstdio>

#include "attn/core/error.h"
#include "attn/text/utf8.h"

namespace attn::text {

Vocab::Vocab() {
  pieces_ = {"<pad>", "<unk>", "<s>", "</s>"};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    pieces_.emplace_back(name);
  }
  pieces_.emplace_back(kWordMarkerText);
  for (std::int32_t i = 0; i < size(); ++i) ids_.emplace(pieces_[i], i);
}

std::int32_t Vocab::add(std::string piece) {
  require(!piece.empty(), "vocabulary: empty piece");
  std::size_t bad = 0;
  require(valid_utf8(piece, &bad), "vocabulary: piece is not valid UTF-8");
  require(!contains(piece), "vocabulary: duplicate piece '" + piece + "'");
  const std::int32_t new_id = size();
  ids_.emplace(piece, new_id);
  pieces_.push_back(std::move(piece));
  return new_id;
}

std::int32_t Vocab::id(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? kUnk : it->second;
}

bool Vocab::contains(std::string_view piece) const { return ids_.find(piece) != ids_.end(); }

const std::string& Vocab::piece(std::int32_t id) const {
  require(id >= 0 && id < size(),
          "vocabulary: id " + std::to_string(id) + " out of range [0, " + std::to_string(size()) + ")");
  return pieces_[id];
}

}  // namespace attn::text
