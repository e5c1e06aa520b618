// Vocabulary: a bijection between ids and pieces (UTF-8 strings).
//
// Layout, fixed so that every model agrees on the first 261 ids:
//   0..3     specials  "<pad>" "<unk>" "<s>" "</s>"
//   4..259   byte pieces "<0x00>".."<0xFF>": byte fallback for characters
//            that have no piece of their own (as SentencePiece's
//            byte_fallback), so encoding never loses information
//   260      "▁" (U+2581), the word-start marker (see pretokenizer.h)
//   261..    learned: single characters, then the results of merges
// A piece string is unique; learned pieces are never empty and are valid
// UTF-8.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::text {

inline constexpr std::int32_t kPad = 0, kUnk = 1, kBos = 2, kEos = 3;
inline constexpr std::int32_t kNumSpecials = 4;
inline constexpr std::int32_t kFirstByte = 4;
inline constexpr std::int32_t kWordMarker = 260;
inline constexpr std::int32_t kFirstLearned = 261;
inline constexpr std::string_view kWordMarkerText = "\xE2\x96\x81";  // U+2581

class Vocab {
 public:
  // The fixed part only: specials, byte pieces and the word marker.
  Vocab();

  // Appends a learned piece and returns its id; throws attn::Error when the
  // piece is empty, not valid UTF-8, or already present.
  std::int32_t add(std::string piece);

  std::int32_t size() const { return static_cast<std::int32_t>(pieces_.size()); }
  std::int32_t id(std::string_view piece) const;  // kUnk if absent
  bool contains(std::string_view piece) const;
  const std::string& piece(std::int32_t id) const;  // throws attn::Error out of range
  const std::vector<std::string>& pieces() const { return pieces_; }

  static bool is_special(std::int32_t id) { return id >= 0 && id < kNumSpecials; }
  static bool is_byte(std::int32_t id) { return id >= kFirstByte && id < kFirstByte + 256; }
  static std::uint8_t byte_value(std::int32_t byte_id) { return static_cast<std::uint8_t>(byte_id - kFirstByte); }
  static std::int32_t byte_id(std::uint8_t byte) { return kFirstByte + byte; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, std::int32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace attn::text
