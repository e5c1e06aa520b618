// Byte-pair encoding with byte fallback: learned in-process, encodes a line
// to ids and decodes ids back to the line.
//
// Guarantees (see pretokenizer.h for the splitting rules):
//   - decode(encode(line)) == line for every valid UTF-8 line, up to
//     whitespace normalisation: runs of ' '/\t (and other ASCII
//     whitespace) become one space, line ends are trimmed. Characters never
//     seen in training are encoded as their UTF-8 bytes ("<0xE2>" ...), so
//     nothing is lost and nothing maps to <unk>.
//   - Invalid UTF-8 never crashes encode: each bad byte becomes its byte
//     piece, and decode writes U+FFFD for each byte that does not form a
//     valid character. decode's output is therefore always valid UTF-8,
//     whatever ids a model emits.
//   - encode adds no <s>/</s>; decode skips <pad>, <s> and </s>, writes
//     "⁇" (U+2047) for <unk>, and throws attn::Error for an id outside the
//     vocabulary.
//   - All const member functions keep no mutable state: safe to call from
//     several threads at once.
// Merges are applied per pre-token by rank (lowest rank first, leftmost
// first among equal ranks), which reproduces the learner's segmentation.
// (The one exception: when a merge re-created an existing piece, e.g.
// "a"+"bc" after "ab"+"c", the encoder may merge around it a little more
// eagerly than the learner did. Still lossless; absent on Multi30k.)
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attn/text/bpe_learn.h"
#include "attn/text/pretokenizer.h"
#include "attn/text/vocab.h"

namespace attn::text {

class Bpe {
 public:
  using Options = BpeOptions;

  // No learned pieces: every character goes through byte fallback.
  Bpe();

  // lines: all training lines (source and target, for a joint vocabulary).
  static Bpe learn(const std::vector<std::string>& lines, const Options& options);

  std::vector<std::int32_t> encode(std::string_view line) const;
  // The first max_ids of encode(line), with no merging done past them: the
  // pre-tokens after the one that reaches max_ids are only scanned, so a
  // caller that keeps a bounded input pays little for a huge one.
  std::vector<std::int32_t> encode_prefix(std::string_view line, std::size_t max_ids) const;
  // The pieces of encode(line) as strings, e.g. {"▁Ein", "▁Mann", "."}.
  std::vector<std::string> encode_pieces(std::string_view line) const;
  std::string decode(std::span<const std::int32_t> ids) const;
  // decode() as one line: line breaks a model emitted (an untrained one does)
  // become spaces, so that one input line gives one output line.
  std::string decode_line(std::span<const std::int32_t> ids) const;

  const Vocab& vocab() const { return vocab_; }
  const std::vector<MergePair>& merges() const { return merges_; }

  // {"format": "attn-bpe", "version": 1, "pieces": [all pieces by id],
  //  "merges": [[left id, right id], ... in rank order]}
  nlohmann::json to_json() const;
  // Validates everything (fixed pieces in place, unique valid pieces, every
  // merge over pieces that exist by then and yielding a piece, every learned
  // piece a single character or a merge result); throws attn::Error.
  static Bpe from_json(const nlohmann::json& json);

 private:
  Bpe(Vocab vocab, std::vector<MergePair> merges);

  // The working state of one pre-token's merges, kept between pre-tokens of a line.
  struct MergeQueue;
  // Appends the ids of one pre-token to out. O(n log n) in its n symbols:
  // the candidate merges wait in a heap, the symbols in a linked list.
  void encode_pretoken(const PreToken& token, std::vector<std::int32_t>& out, MergeQueue& queue) const;
  std::int32_t char_id(char32_t code_point) const;  // -1 when the character has no piece

  // Open-addressing table (left << 32 | right) -> merge; key kEmptySlot = unused.
  struct MergeSlot {
    std::uint64_t key;
    std::int32_t rank;
    std::int32_t result;
  };
  static constexpr std::uint64_t kEmptySlot = ~std::uint64_t{0};
  const MergeSlot* find_merge(std::int32_t left, std::int32_t right) const;

  Vocab vocab_;
  std::vector<MergePair> merges_;
  std::vector<MergeSlot> merge_slots_;  // size: a power of two, at most half full
  std::array<std::int32_t, 128> ascii_ids_;
  std::unordered_map<char32_t, std::int32_t> char_ids_;  // non-ASCII characters
};

}  // namespace attn::text
