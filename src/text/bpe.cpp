#include "attn/text/bpe.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>

#include "attn/core/error.h"
#include "attn/text/utf8.h"

namespace attn::text {
namespace {

constexpr char32_t kLiteralMarker = 0x2581;
constexpr std::string_view kUnkText = "\xE2\x81\x87";  // U+2047 "⁇"
constexpr std::string_view kFormat = "attn-bpe";
constexpr int kFormatVersion = 1;

std::uint64_t merge_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

std::size_t slot_hash(std::uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return static_cast<std::size_t>(key);
}

// Appends bytes that came from byte pieces: valid characters as they are,
// each byte that is not part of one as U+FFFD.
void flush_bytes(std::string& bytes, std::string& out) {
  for (std::size_t pos = 0; pos < bytes.size();) {
    const Utf8Char c = decode_char(bytes, pos);
    if (c.valid)
      out.append(bytes, pos, c.length);
    else
      out.append(kReplacementChar);
    pos += c.length;
  }
  bytes.clear();
}

}  // namespace

Bpe::Bpe() : Bpe(Vocab(), {}) {}

Bpe::Bpe(Vocab vocab, std::vector<MergePair> merges) : vocab_(std::move(vocab)), merges_(std::move(merges)) {
  ascii_ids_.fill(-1);
  for (std::int32_t id = kFirstLearned; id < vocab_.size(); ++id) {
    const std::string& piece = vocab_.pieces()[id];
    const Utf8Char c = decode_char(piece, 0);
    if (static_cast<std::size_t>(c.length) != piece.size()) continue;  // not a single character
    if (c.code_point < 128)
      ascii_ids_[c.code_point] = id;
    else
      char_ids_.emplace(c.code_point, id);
  }
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, 2 * merges_.size()));
  merge_slots_.assign(capacity, MergeSlot{kEmptySlot, 0, 0});
  for (std::size_t rank = 0; rank < merges_.size(); ++rank) {
    const auto [left, right] = merges_[rank];
    const std::int32_t result = vocab_.id(vocab_.pieces()[left] + vocab_.pieces()[right]);
    const std::uint64_t key = merge_key(left, right);
    for (std::size_t i = slot_hash(key) & (capacity - 1);; i = (i + 1) & (capacity - 1)) {
      MergeSlot& slot = merge_slots_[i];
      if (slot.key == key) break;  // a repeated merge keeps its first rank
      if (slot.key == kEmptySlot) {
        slot = {key, static_cast<std::int32_t>(rank), result};
        break;
      }
    }
  }
}

Bpe Bpe::learn(const std::vector<std::string>& lines, const Options& options) {
  LearnedBpe learned = learn_bpe(lines, options);
  return Bpe(std::move(learned.vocab), std::move(learned.merges));
}

const Bpe::MergeSlot* Bpe::find_merge(std::int32_t left, std::int32_t right) const {
  const std::uint64_t key = merge_key(left, right);
  const std::size_t mask = merge_slots_.size() - 1;
  for (std::size_t i = slot_hash(key) & mask;; i = (i + 1) & mask) {
    const MergeSlot& slot = merge_slots_[i];
    if (slot.key == key) return &slot;
    if (slot.key == kEmptySlot) return nullptr;
  }
}

std::int32_t Bpe::char_id(char32_t code_point) const {
  if (code_point < 128) return ascii_ids_[code_point];
  const auto it = char_ids_.find(code_point);
  return it == char_ids_.end() ? -1 : it->second;
}

// A candidate merge of the live symbol at `left` with the one after it, as
// it was when queued: stale once either symbol has changed (a symbol only
// ever grows into a longer piece, so equal ids mean the same pair).
struct Bpe::MergeQueue {
  struct Candidate {
    std::int32_t rank;
    std::int32_t left_pos, right_pos;  // positions in symbols
    std::int32_t left_id, right_id;
    // The heap's top is the lowest rank, leftmost first: the order of the learner.
    bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left_pos > o.left_pos; }
  };
  std::vector<std::int32_t> symbols;     // ids by position; merged-away positions stay, unlinked
  std::vector<std::int32_t> next, prev;  // live neighbours, −1 at the ends
  std::vector<Candidate> heap;
};

void Bpe::encode_pretoken(const PreToken& token, std::vector<std::int32_t>& out, MergeQueue& queue) const {
  std::vector<std::int32_t>& symbols = queue.symbols;
  symbols.clear();
  if (token.word_start) symbols.push_back(kWordMarker);
  for (std::size_t pos = 0; pos < token.text.size();) {
    const Utf8Char c = decode_char(token.text, pos);
    const std::int32_t id = c.valid && c.code_point != kLiteralMarker ? char_id(c.code_point) : -1;
    if (id >= 0) {
      symbols.push_back(id);
    } else {
      for (int b = 0; b < c.length; ++b)
        symbols.push_back(Vocab::byte_id(static_cast<std::uint8_t>(token.text[pos + b])));
    }
    pos += c.length;
  }
  const auto n = static_cast<std::int32_t>(symbols.size());
  queue.next.resize(symbols.size());
  queue.prev.resize(symbols.size());
  for (std::int32_t i = 0; i < n; ++i) {
    queue.next[i] = i + 1 < n ? i + 1 : -1;
    queue.prev[i] = i - 1;
  }
  auto& heap = queue.heap;
  heap.clear();
  const auto push = [&](std::int32_t left) {
    const std::int32_t right = queue.next[left];
    if (right < 0) return;
    if (const MergeSlot* slot = find_merge(symbols[left], symbols[right])) {
      heap.push_back({slot->rank, left, right, symbols[left], symbols[right]});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const MergeQueue::Candidate c = heap.back();
    heap.pop_back();
    if (queue.next[c.left_pos] != c.right_pos || symbols[c.left_pos] != c.left_id || symbols[c.right_pos] != c.right_id)
      continue;  // stale: one side has merged since
    symbols[c.left_pos] = find_merge(c.left_id, c.right_id)->result;
    const std::int32_t after = queue.next[c.right_pos];
    queue.next[c.left_pos] = after;
    if (after >= 0) queue.prev[after] = c.left_pos;
    queue.next[c.right_pos] = -1;  // unlinked: no candidate can name it as a left side again
    symbols[c.right_pos] = -1;
    if (queue.prev[c.left_pos] >= 0) push(queue.prev[c.left_pos]);
    push(c.left_pos);
  }
  for (std::int32_t i = n > 0 ? 0 : -1; i >= 0; i = queue.next[i]) out.push_back(symbols[i]);
}

std::vector<std::int32_t> Bpe::encode(std::string_view line) const { return encode_prefix(line, SIZE_MAX); }

std::vector<std::int32_t> Bpe::encode_prefix(std::string_view line, std::size_t max_ids) const {
  std::vector<std::int32_t> ids;
  MergeQueue queue;
  ids.reserve(std::min(line.size() / 3 + 4, max_ids));
  for_each_pretoken(line, [&](const PreToken& token) {
    if (ids.size() < max_ids) encode_pretoken(token, ids, queue);
  });
  if (ids.size() > max_ids) ids.resize(max_ids);
  return ids;
}

std::vector<std::string> Bpe::encode_pieces(std::string_view line) const {
  std::vector<std::string> pieces;
  for (const std::int32_t id : encode(line)) pieces.push_back(vocab_.pieces()[id]);
  return pieces;
}

std::string Bpe::decode_line(std::span<const std::int32_t> ids) const {
  std::string text = decode(ids);
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

std::string Bpe::decode(std::span<const std::int32_t> ids) const {
  std::string out, bytes;
  for (const std::int32_t id : ids) {
    require(id >= 0 && id < vocab_.size(), "BPE decode: token id " + std::to_string(id) +
                                               " is outside the vocabulary of " + std::to_string(vocab_.size()));
    if (id == kPad || id == kBos || id == kEos) continue;
    if (Vocab::is_byte(id)) {
      bytes.push_back(static_cast<char>(Vocab::byte_value(id)));
      continue;
    }
    flush_bytes(bytes, out);
    if (id == kUnk) {
      out.append(kUnkText);
      continue;
    }
    const std::string_view piece = vocab_.pieces()[id];
    for (std::size_t pos = 0; pos < piece.size();) {
      if (piece.compare(pos, kWordMarkerText.size(), kWordMarkerText) == 0) {
        out.push_back(' ');
        pos += kWordMarkerText.size();
      } else {
        out.push_back(piece[pos++]);
      }
    }
  }
  flush_bytes(bytes, out);
  if (!out.empty() && out.front() == ' ') out.erase(0, 1);
  return out;
}

nlohmann::json Bpe::to_json() const {
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& [left, right] : merges_) merges.push_back({left, right});
  return {{"format", kFormat}, {"version", kFormatVersion}, {"pieces", vocab_.pieces()}, {"merges", merges}};
}

Bpe Bpe::from_json(const nlohmann::json& json) {
  const std::string where = "BPE model in the metadata: ";
  try {
    require(json.is_object(), where + "expected a JSON object");
    require(json.contains("format") && json.at("format") == kFormat,
            where + "\"format\" is not \"" + std::string(kFormat) + "\"");
    require(json.contains("version") && json.at("version").is_number_integer() &&
                json.at("version").get<int>() == kFormatVersion,
            where + "unsupported \"version\" (this attn reads version " + std::to_string(kFormatVersion) + ")");
    require(json.contains("pieces") && json.at("pieces").is_array(), where + "\"pieces\" must be an array");
    require(json.contains("merges") && json.at("merges").is_array(), where + "\"merges\" must be an array");

    const nlohmann::json& pieces = json.at("pieces");
    Vocab vocab;
    require(pieces.size() >= static_cast<std::size_t>(kFirstLearned),
            where + "\"pieces\" has fewer than the " + std::to_string(kFirstLearned) + " fixed pieces");
    for (std::size_t id = 0; id < pieces.size(); ++id) {
      require(pieces[id].is_string(), where + "piece " + std::to_string(id) + " is not a string");
      const std::string& piece = pieces[id].get_ref<const std::string&>();
      if (id < static_cast<std::size_t>(kFirstLearned)) {
        require(piece == vocab.pieces()[id], where + "piece " + std::to_string(id) + " should be '" +
                                                 vocab.pieces()[id] + "', found '" + piece + "'");
      } else {
        vocab.add(piece);
      }
    }

    // A piece is reachable when the encoder can produce it: a single
    // character (or the marker), or the result of an earlier merge.
    std::vector<bool> reachable(vocab.size(), false);
    reachable[kWordMarker] = true;
    for (std::int32_t id = kFirstLearned; id < vocab.size(); ++id) {
      const std::string& piece = vocab.pieces()[id];
      reachable[id] = static_cast<std::size_t>(decode_char(piece, 0).length) == piece.size() &&
                      std::string_view(piece) != kWordMarkerText;
    }
    std::vector<MergePair> merges;
    const nlohmann::json& merge_list = json.at("merges");
    merges.reserve(merge_list.size());
    for (std::size_t rank = 0; rank < merge_list.size(); ++rank) {
      const nlohmann::json& m = merge_list[rank];
      const std::string which = where + "merge " + std::to_string(rank) + " ";
      require(m.is_array() && m.size() == 2 && m[0].is_number_integer() && m[1].is_number_integer(),
              which + "must be a pair of piece ids");
      const std::int64_t left = m[0].get<std::int64_t>(), right = m[1].get<std::int64_t>();
      require(left >= kWordMarker && left < vocab.size() && right >= kWordMarker && right < vocab.size(),
              which + "refers to a piece that is out of range or not mergeable");
      require(reachable[left] && reachable[right], which + "uses a piece that no earlier merge produced");
      const std::string merged = vocab.pieces()[left] + vocab.pieces()[right];
      require(vocab.contains(merged), which + "yields '" + merged + "', which is not a piece");
      reachable[vocab.id(merged)] = true;
      merges.emplace_back(static_cast<std::int32_t>(left), static_cast<std::int32_t>(right));
    }
    for (std::int32_t id = kFirstLearned; id < vocab.size(); ++id)
      require(reachable[id], where + "piece " + std::to_string(id) + " '" + vocab.pieces()[id] +
                                 "' is neither a character nor produced by a merge");
    return Bpe(std::move(vocab), std::move(merges));
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + e.what());
  }
}

}  // namespace attn::text
