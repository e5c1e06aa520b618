#include "attn/text/bpe_learn.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "attn/core/error.h"
#include "attn/text/pretokenizer.h"

namespace attn::text {
namespace {

constexpr char32_t kLiteralMarker = 0x2581;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Distinct pre-tokens with their counts. Key: one flag byte (1 = word start)
// followed by the pre-token's text.
using WordCounts = std::unordered_map<std::string, std::int64_t, StringHash, std::equal_to<>>;

WordCounts count_words(const std::vector<std::string>& lines) {
  WordCounts counts;
  std::string key;
  for (const std::string& line : lines) {
    for_each_pretoken(line, [&](const PreToken& token) {
      key.assign(1, token.word_start ? '\1' : '\0');
      key.append(token.text);
      const auto it = counts.find(std::string_view(key));
      if (it != counts.end())
        ++it->second;
      else
        counts.emplace(key, 1);
    });
  }
  return counts;
}

// Adds the characters seen at least min_frequency times, most frequent
// first, while there is room; returns code point -> id.
std::unordered_map<char32_t, std::int32_t> learn_characters(const WordCounts& words, const BpeOptions& options,
                                                            Vocab& vocab) {
  std::unordered_map<char32_t, std::int64_t> char_counts;
  for (const auto& [key, count] : words) {
    const std::string_view text = std::string_view(key).substr(1);
    for (std::size_t pos = 0; pos < text.size();) {
      const Utf8Char c = decode_char(text, pos);
      if (c.valid && c.code_point != kLiteralMarker) char_counts[c.code_point] += count;
      pos += c.length;
    }
  }
  std::vector<std::pair<char32_t, std::int64_t>> ranked;
  for (const auto& [cp, count] : char_counts)
    if (count >= options.min_frequency) ranked.emplace_back(cp, count);
  std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  std::unordered_map<char32_t, std::int32_t> ids;
  for (const auto& [cp, count] : ranked) {
    if (vocab.size() >= options.vocab_size) break;
    std::string piece;
    append_utf8(piece, cp);
    ids.emplace(cp, vocab.add(std::move(piece)));
  }
  return ids;
}

// A distinct pre-token as a sequence of piece ids; kUnk stands for a
// character without a piece, which no pair may include.
struct Word {
  std::vector<std::int32_t> symbols;
  std::int64_t count;
};

bool mergeable(std::int32_t id) { return id >= kWordMarker; }

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}
std::int32_t key_left(std::uint64_t key) { return static_cast<std::int32_t>(key >> 32); }
std::int32_t key_right(std::uint64_t key) { return static_cast<std::int32_t>(key & 0xFFFFFFFFu); }

struct HeapEntry {
  std::int64_t count;
  std::uint64_t pair;
};

// Heap order: higher count first, then the lexicographically smaller
// (left piece, right piece) as bytes.
struct LowerPriority {
  const Vocab* vocab;
  bool operator()(const HeapEntry& x, const HeapEntry& y) const {
    if (x.count != y.count) return x.count < y.count;
    const auto& pieces = vocab->pieces();
    const int by_left = pieces[key_left(x.pair)].compare(pieces[key_left(y.pair)]);
    if (by_left != 0) return by_left > 0;
    return pieces[key_right(x.pair)].compare(pieces[key_right(y.pair)]) > 0;
  }
};

class MergeLearner {
 public:
  MergeLearner(std::vector<Word> words, Vocab& vocab, std::int64_t min_frequency)
      : words_(std::move(words)), vocab_(vocab), min_frequency_(min_frequency), visited_at_(words_.size(), -1) {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      const auto& s = words_[w].symbols;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        if (!mergeable(s[i]) || !mergeable(s[i + 1])) continue;
        const std::uint64_t key = pair_key(s[i], s[i + 1]);
        pair_counts_[key] += words_[w].count;
        auto& where = pair_words_[key];
        if (where.empty() || where.back() != static_cast<std::int32_t>(w))
          where.push_back(static_cast<std::int32_t>(w));
      }
    }
    for (const auto& [key, count] : pair_counts_)
      if (count >= min_frequency_) heap_.push_back({count, key});
    std::make_heap(heap_.begin(), heap_.end(), LowerPriority{&vocab_});
  }

  // Learns merges until the vocabulary reaches vocab_size or pairs run out.
  std::vector<MergePair> run(std::int32_t vocab_size) {
    std::vector<MergePair> merges;
    while (vocab_.size() < vocab_size) {
      const std::uint64_t best = pop_best();
      if (best == kNone) break;
      const std::int32_t left = key_left(best), right = key_right(best);
      std::string merged = vocab_.pieces()[left] + vocab_.pieces()[right];
      const std::int32_t existing = vocab_.contains(merged) ? vocab_.id(merged) : -1;
      const std::int32_t result = existing >= 0 ? existing : vocab_.add(std::move(merged));
      apply(best, result, static_cast<std::int32_t>(merges.size()));
      merges.emplace_back(left, right);
    }
    return merges;
  }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  // The pair with the highest current count (>= min_frequency), or kNone.
  // Entries are lazy: one whose count is out of date is re-pushed with the
  // current count when lower (a higher one was pushed when it rose).
  std::uint64_t pop_best() {
    const auto order = LowerPriority{&vocab_};
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), order);
      const HeapEntry top = heap_.back();
      heap_.pop_back();
      const auto it = pair_counts_.find(top.pair);
      const std::int64_t current = it == pair_counts_.end() ? 0 : it->second;
      if (current == top.count) return top.pair;
      if (current < top.count && current >= min_frequency_) {
        heap_.push_back({current, top.pair});
        std::push_heap(heap_.begin(), heap_.end(), order);
      }
    }
    return kNone;
  }

  void add_count(std::int32_t left, std::int32_t right, std::int64_t delta, std::int32_t word) {
    if (!mergeable(left) || !mergeable(right)) return;
    const std::uint64_t key = pair_key(left, right);
    pair_counts_[key] += delta;
    if (delta > 0) {
      raised_.push_back(key);
      auto& where = pair_words_[key];
      if (where.empty() || where.back() != word) where.push_back(word);
    }
  }

  // Replaces each (left, right) by result, left to right, in the words that
  // contain it, and updates the counts of the pairs around each occurrence.
  void apply(std::uint64_t pair, std::int32_t result, std::int32_t merge_index) {
    const std::int32_t left = key_left(pair), right = key_right(pair);
    const auto where_it = pair_words_.find(pair);
    std::vector<std::int32_t> candidates = std::move(where_it->second);
    pair_words_.erase(where_it);
    raised_.clear();
    for (const std::int32_t w : candidates) {
      if (visited_at_[w] == merge_index) continue;
      visited_at_[w] = merge_index;
      Word& word = words_[w];
      const std::int64_t n = word.count;
      const std::vector<std::int32_t>& s = word.symbols;
      std::vector<std::int32_t>& out = scratch_;
      out.clear();
      bool changed = false;
      for (std::size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
          if (!out.empty()) {
            add_count(out.back(), left, -n, w);
            add_count(out.back(), result, n, w);
          }
          if (i + 2 < s.size()) {
            add_count(right, s[i + 2], -n, w);
            add_count(result, s[i + 2], n, w);
          }
          add_count(left, right, -n, w);
          out.push_back(result);
          i += 2;
          changed = true;
        } else {
          out.push_back(s[i]);
          ++i;
        }
      }
      if (changed) word.symbols.swap(out);
    }
    pair_counts_.erase(pair);
    std::sort(raised_.begin(), raised_.end());
    raised_.erase(std::unique(raised_.begin(), raised_.end()), raised_.end());
    const auto order = LowerPriority{&vocab_};
    for (const std::uint64_t key : raised_) {
      const auto it = pair_counts_.find(key);
      if (it == pair_counts_.end() || it->second < min_frequency_) continue;
      heap_.push_back({it->second, key});
      std::push_heap(heap_.begin(), heap_.end(), order);
    }
  }

  std::vector<Word> words_;
  Vocab& vocab_;
  std::int64_t min_frequency_;
  std::vector<std::int32_t> visited_at_;  // per word: last merge index that scanned it
  std::unordered_map<std::uint64_t, std::int64_t> pair_counts_;
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> pair_words_;  // may hold stale words
  std::vector<HeapEntry> heap_;
  std::vector<std::uint64_t> raised_;  // pairs whose count rose in this merge
  std::vector<std::int32_t> scratch_;
};

}  // namespace

LearnedBpe learn_bpe(const std::vector<std::string>& lines, const BpeOptions& options) {
  require(options.vocab_size >= kFirstLearned,
          "BPE: vocabulary size " + std::to_string(options.vocab_size) + " is too small; it must be at least " +
              std::to_string(kFirstLearned) + " (4 specials, 256 byte pieces, the word marker)");
  require(options.min_frequency >= 1, "BPE: minimum frequency must be at least 1");

  LearnedBpe learned;
  const WordCounts word_counts = count_words(lines);
  const auto char_ids = learn_characters(word_counts, options, learned.vocab);

  std::vector<Word> words;
  words.reserve(word_counts.size());
  for (const auto& [key, count] : word_counts) {
    Word word{{}, count};
    if (key[0] == '\1') word.symbols.push_back(kWordMarker);
    const std::string_view text = std::string_view(key).substr(1);
    for (std::size_t pos = 0; pos < text.size();) {
      const Utf8Char c = decode_char(text, pos);
      const auto it = c.valid ? char_ids.find(c.code_point) : char_ids.end();
      word.symbols.push_back(it == char_ids.end() ? kUnk : it->second);
      pos += c.length;
    }
    if (word.symbols.size() >= 2) words.push_back(std::move(word));
  }

  MergeLearner learner(std::move(words), learned.vocab, options.min_frequency);
  learned.merges = learner.run(options.vocab_size);
  return learned;
}

}  // namespace attn::text
