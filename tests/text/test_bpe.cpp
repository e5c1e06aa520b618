#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attn/core/error.h"
#include "attn/text/bpe.h"
#include "attn/text/utf8.h"

using namespace attn::text;

namespace {

// What encode→decode must give back: ASCII whitespace runs collapsed to one
// space, line ends trimmed.
std::string normalise_whitespace(std::string_view line) {
  std::string out;
  bool pending_space = false;
  for (char c : line) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
      pending_space = !out.empty();
    } else {
      if (pending_space) out += ' ';
      pending_space = false;
      out += c;
    }
  }
  return out;
}

std::vector<std::string> piece_strings(const Bpe& bpe, const std::vector<MergePair>& merges) {
  std::vector<std::string> out;
  for (const auto& [left, right] : merges) out.push_back(bpe.vocab().piece(left) + bpe.vocab().piece(right));
  return out;
}

// Sennrich et al.'s example: low ×5, lower ×2, newest ×6, widest ×3.
std::vector<std::string> toy_corpus() {
  return {"low low low low low", "lower lower", "newest newest newest newest newest newest", "widest widest widest"};
}

const std::vector<std::string>& small_corpus() {
  static const std::vector<std::string> lines = {
      "Ein Mann fährt mit dem Fahrrad über eine Brücke.",
      "A man rides a bicycle over a bridge.",
      "Zwei Hunde spielen im Schnee.",
      "Two dogs are playing in the snow.",
      "Eine Frau in einem roten Kleid läuft die Straße entlang.",
      "A woman in a red dress walks along the old street.",
      "Kinder spielen Fußball auf einer großen Wiese.",
      "Children play soccer on a large meadow.",
      "Ein älterer Mann sitzt auf einer Bank und liest die Zeitung.",
      "An older man sits on a bench and reads the newspaper.",
      "Drei Männer stehen vor einem Gebäude und reden miteinander.",
      "Three men stand in front of a building and talk to each other.",
      "Ein Junge springt ins Wasser, während seine Freunde zuschauen.",
      "A boy jumps into the water while his friends watch.",
      "Die Musiker spielen auf der Bühne vor 200 Zuschauern.",
      "The musicians play on stage in front of 200 spectators.",
  };
  return lines;
}

std::vector<std::string> round_trip_lines() {
  return {
      "",
      "   ",
      "Ein Mann fährt mit dem Fahrrad über eine Brücke.",
      "Größere Übungen: Ärger, Öl, Straße — „Anführungszeichen“ und ‚einfach‘.",
      "Emoji 😀👍🏽 and family 👨\u200D👩\u200D👧 and flag 🇩🇪!",
      "中文测试：你好，世界。日本語のテキスト、한국어 문장.",
      "مرحبا بالعالم، كيف حالك؟",
      "Combining: cafe\u0301, n\u0303, a\u0308\u0301 and lone \u0301 marks.",
      "Digits 0123456789 and 3.14159, 1,000,000 and ٣٤٥ and ९.",
      "Punctuation runs: ... !!! ??? --- ((())) \"\" '' ;;; ::",
      "Unseen: Ω ж ß ø ł ŋ ɛ ʃ ☃ ♞ ∑ ∫ √ ≠ ≤ ≥ ∞ ← ↑ → ↓ ⇒ ⌘ ␣ 𝄞 𐍈 \U0010FFFD",
      "Literal marker \u2581 and \u2581\u2581 stay literal\u2581.",
      "<s> </s> <pad> <unk> <0x41> are just text here",
      "Tabs\tand   multiple    spaces\t\tcollapse;  ends trim  ",
      "Controls \x01\x02\x7F and NBSP\u00A0and ideographic\u3000space",
      "U+FFFD \uFFFD and noncharacter \uFFFF",
      "x",
      ".",
  };
}

// A random valid UTF-8 line mixing ASCII, whitespace, Latin, marks, CJK,
// emoji and arbitrary scalar values.
std::string random_line(std::mt19937& gen) {
  std::uniform_int_distribution<int> length_dist(0, 30), kind_dist(0, 9);
  std::string s;
  const int length = length_dist(gen);
  for (int i = 0; i < length; ++i) {
    char32_t cp;
    const auto in = [&](char32_t lo, char32_t hi) { return std::uniform_int_distribution<char32_t>(lo, hi)(gen); };
    switch (kind_dist(gen)) {
      case 0: cp = in(0x20, 0x7E); break;
      case 1: cp = U" \t"[in(0, 1)]; break;
      case 2: cp = in(U'a', U'z'); break;
      case 3: cp = in(0xC0, 0x17F); break;
      case 4: cp = in(0x300, 0x36F); break;
      case 5: cp = in(0x4E00, 0x9FFF); break;
      case 6: cp = in(0x1F300, 0x1F6FF); break;
      case 7: cp = in(0x2570, 0x2590); break;  // around the marker U+2581
      case 8: cp = in(0x1, 0x1F); break;
      default:
        do cp = in(0, 0x10FFFF);
        while (cp >= 0xD800 && cp <= 0xDFFF);
    }
    append_utf8(s, cp);
  }
  return s;
}

void require_round_trip(const Bpe& bpe, const std::string& line) {
  INFO("line: " << line);
  const std::vector<std::int32_t> ids = bpe.encode(line);
  for (const std::int32_t id : ids) {
    REQUIRE(id >= kUnk + 3);  // no specials at all, in particular no <unk>
    REQUIRE(id < bpe.vocab().size());
  }
  REQUIRE(bpe.decode(ids) == normalise_whitespace(line));
}

}  // namespace

TEST_CASE("vocab: fixed specials, byte pieces and marker at fixed ids", "[text]") {
  const Vocab vocab;
  REQUIRE(vocab.size() == kFirstLearned);
  REQUIRE(vocab.id("<pad>") == kPad);
  REQUIRE(vocab.id("<unk>") == kUnk);
  REQUIRE(vocab.id("<s>") == kBos);
  REQUIRE(vocab.id("</s>") == kEos);
  REQUIRE(vocab.piece(kFirstByte) == "<0x00>");
  REQUIRE(vocab.piece(Vocab::byte_id(0xE2)) == "<0xE2>");
  REQUIRE(vocab.id("<0xFF>") == kFirstByte + 255);
  REQUIRE(vocab.piece(kWordMarker) == "\u2581");
  REQUIRE(vocab.id("never seen") == kUnk);
  REQUIRE_FALSE(vocab.contains("never seen"));
  REQUIRE_THROWS_AS(vocab.piece(-1), attn::Error);
  REQUIRE_THROWS_AS(vocab.piece(kFirstLearned), attn::Error);

  Vocab grown;
  REQUIRE(grown.add("ab") == kFirstLearned);
  REQUIRE(grown.id("ab") == kFirstLearned);
  REQUIRE_THROWS_AS(grown.add("ab"), attn::Error);
  REQUIRE_THROWS_AS(grown.add("<s>"), attn::Error);
  REQUIRE_THROWS_AS(grown.add(""), attn::Error);
  REQUIRE_THROWS_AS(grown.add("\xFF"), attn::Error);
}

TEST_CASE("bpe: learns the hand-checked merges of a toy corpus", "[text]") {
  // Characters by count: e17 w16 s9 t9 l7 o7 n6 d3 i3 r2. Pairs first: es 9
  // ties st 9 and "e" < "s"; then est 9; then ▁l/lo/ow tie at 7 and
  // "l" < "o" < "▁" (0xE2) bytewise; and so on.
  const Bpe bpe = Bpe::learn(toy_corpus(), {.vocab_size = 1000, .min_frequency = 2});
  const std::vector<std::string> expected = {"es",      "est",  "lo",    "low",    "▁low",    "ew", "ewest", "newest",
                                             "▁newest", "dest", "idest", "widest", "▁widest", "er", "▁lower"};
  REQUIRE(piece_strings(bpe, bpe.merges()) == expected);
  REQUIRE(bpe.vocab().size() == kFirstLearned + 10 + 15);  // pairs ran out before 1000
  const std::vector<std::string> chars = {"e", "w", "s", "t", "l", "o", "n", "d", "i", "r"};
  for (std::size_t i = 0; i < chars.size(); ++i) REQUIRE(bpe.vocab().piece(kFirstLearned + i) == chars[i]);

  REQUIRE(bpe.encode_pieces("lowest newer") == std::vector<std::string>{"▁low", "est", "▁", "n", "ew", "er"});
  REQUIRE(bpe.encode_pieces("newest") == std::vector<std::string>{"▁newest"});
  // 'x' was never seen: byte fallback.
  REQUIRE(bpe.encode_pieces("lox") == std::vector<std::string>{"▁", "lo", "<0x78>"});
  REQUIRE(bpe.decode(bpe.encode("lox")) == "lox");
}

TEST_CASE("bpe: vocab_size is respected exactly and min_frequency filters", "[text]") {
  const Bpe five = Bpe::learn(toy_corpus(), {.vocab_size = kFirstLearned + 10 + 5, .min_frequency = 2});
  REQUIRE(five.vocab().size() == kFirstLearned + 15);
  REQUIRE(piece_strings(five, five.merges()) == std::vector<std::string>{"es", "est", "lo", "low", "▁low"});

  // Fewer pieces than characters: the most frequent characters only.
  const Bpe four_chars = Bpe::learn(toy_corpus(), {.vocab_size = kFirstLearned + 4, .min_frequency = 2});
  REQUIRE(four_chars.vocab().size() == kFirstLearned + 4);
  REQUIRE(four_chars.merges().empty());
  REQUIRE(four_chars.vocab().piece(kFirstLearned + 3) == "t");
  REQUIRE(four_chars.decode(four_chars.encode("lowest wider")) == "lowest wider");

  // min_frequency 3 drops 'r' (2) and the pairs seen twice (er, ▁lower).
  const Bpe three = Bpe::learn(toy_corpus(), {.vocab_size = 1000, .min_frequency = 3});
  REQUIRE(three.vocab().size() == kFirstLearned + 9 + 13);
  REQUIRE_FALSE(three.vocab().contains("r"));
  REQUIRE(three.encode_pieces("lower") == std::vector<std::string>{"▁low", "e", "<0x72>"});

  for (std::int32_t size : {300, 400, 555}) {
    const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = size, .min_frequency = 1});
    REQUIRE(bpe.vocab().size() == size);
  }
  REQUIRE_THROWS_AS(Bpe::learn(toy_corpus(), {.vocab_size = kFirstLearned - 1, .min_frequency = 2}), attn::Error);
  REQUIRE_THROWS_AS(Bpe::learn(toy_corpus(), {.vocab_size = 1000, .min_frequency = 0}), attn::Error);
}

TEST_CASE("bpe: an empty corpus gives the fixed vocabulary and still round-trips", "[text]") {
  const Bpe bpe = Bpe::learn({}, {.vocab_size = 1000, .min_frequency = 2});
  REQUIRE(bpe.vocab().size() == kFirstLearned);
  REQUIRE(bpe.merges().empty());
  for (const std::string& line : round_trip_lines()) require_round_trip(bpe, line);
  for (const std::string& line : round_trip_lines()) require_round_trip(Bpe(), line);
}

TEST_CASE("bpe: encode→decode is exact up to whitespace on many scripts and unseen characters", "[text]") {
  const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = 500, .min_frequency = 1});
  REQUIRE(bpe.merges().size() > 100);
  std::size_t bytes = 0, tokens = 0;
  for (const std::string& line : small_corpus()) {
    require_round_trip(bpe, line);
    bytes += line.size();
    tokens += bpe.encode(line).size();
  }
  REQUIRE(tokens * 2 < bytes);  // merges did shorten the training lines
  for (const std::string& line : round_trip_lines()) require_round_trip(bpe, line);

  // Literal U+2581 must not read back as a space: it goes through bytes.
  REQUIRE(bpe.encode_pieces("a\u2581") == std::vector<std::string>{"▁a", "<0xE2>", "<0x96>", "<0x81>"});

  std::mt19937 gen(7);
  for (int trial = 0; trial < 2000; ++trial) require_round_trip(bpe, random_line(gen));
}

TEST_CASE("bpe: invalid UTF-8 neither crashes nor leaks into decode's output", "[text]") {
  const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = 400, .min_frequency = 1});
  REQUIRE(bpe.decode(bpe.encode("Mann\xFF"
                                "der")) == "Mann\uFFFDder");
  REQUIRE(bpe.decode(bpe.encode("ab \xE2\x82 \xC0\x80 \xED\xA0\x80")) ==
          "ab \uFFFD\uFFFD \uFFFD\uFFFD \uFFFD\uFFFD\uFFFD");
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 40);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string s;
    for (int i = length(gen); i > 0; --i) s.push_back(static_cast<char>(byte(gen)));
    const std::vector<std::int32_t> ids = bpe.encode(s);
    for (const std::int32_t id : ids) REQUIRE((id > kEos && id < bpe.vocab().size()));
    REQUIRE(valid_utf8(bpe.decode(ids)));
  }
}

TEST_CASE("bpe: decode skips pad/bos/eos, marks <unk>, repairs stray bytes, rejects bad ids", "[text]") {
  const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = 400, .min_frequency = 1});
  std::vector<std::int32_t> ids = bpe.encode("Ein Mann.");
  const std::string plain = bpe.decode(ids);
  REQUIRE(plain == "Ein Mann.");
  ids.insert(ids.begin(), kBos);
  ids.insert(ids.begin() + 2, kPad);
  ids.push_back(kEos);
  ids.push_back(kPad);
  REQUIRE(bpe.decode(ids) == plain);
  REQUIRE(bpe.decode(std::vector<std::int32_t>{}).empty());

  const std::int32_t a = bpe.vocab().id("▁Ein");
  REQUIRE(a != kUnk);
  REQUIRE(bpe.decode(std::vector<std::int32_t>{a, kUnk, a}) == "Ein\u2047 Ein");
  // A lead byte without its continuation, then a complete character.
  REQUIRE(bpe.decode(std::vector<std::int32_t>{Vocab::byte_id(0xE2), Vocab::byte_id(0xC3), Vocab::byte_id(0xA4)}) ==
          "\uFFFDä");
  REQUIRE_THROWS_AS(bpe.decode(std::vector<std::int32_t>{a, bpe.vocab().size()}), attn::Error);
  REQUIRE_THROWS_AS(bpe.decode(std::vector<std::int32_t>{-1}), attn::Error);
}

TEST_CASE("bpe: learning is deterministic and independent of line order", "[text]") {
  const Bpe::Options options{.vocab_size = 450, .min_frequency = 1};
  const Bpe first = Bpe::learn(small_corpus(), options);
  const Bpe second = Bpe::learn(small_corpus(), options);
  REQUIRE(first.to_json() == second.to_json());

  std::vector<std::string> shuffled = small_corpus();
  std::reverse(shuffled.begin(), shuffled.end());
  std::mt19937 gen(3);
  std::shuffle(shuffled.begin(), shuffled.end(), gen);
  REQUIRE(Bpe::learn(shuffled, options).to_json() == first.to_json());
}

TEST_CASE("bpe: to_json/from_json round trip gives identical encodings", "[text]") {
  const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = 480, .min_frequency = 1});
  const nlohmann::json json = bpe.to_json();
  const Bpe restored = Bpe::from_json(nlohmann::json::parse(json.dump()));
  REQUIRE(restored.to_json() == json);
  REQUIRE(restored.vocab().pieces() == bpe.vocab().pieces());
  REQUIRE(restored.merges() == bpe.merges());
  std::vector<std::string> lines = small_corpus();
  for (const std::string& line : round_trip_lines()) lines.push_back(line);
  std::mt19937 gen(5);
  for (int i = 0; i < 300; ++i) lines.push_back(random_line(gen));
  for (const std::string& line : lines) REQUIRE(restored.encode(line) == bpe.encode(line));

  // The model without learned pieces survives too.
  const Bpe empty;
  REQUIRE(Bpe::from_json(empty.to_json()).to_json() == empty.to_json());
}

TEST_CASE("bpe: from_json rejects malformed models with attn::Error", "[text]") {
  const Bpe bpe = Bpe::learn(toy_corpus(), {.vocab_size = 1000, .min_frequency = 2});
  const nlohmann::json good = bpe.to_json();
  REQUIRE_NOTHROW(Bpe::from_json(good));
  const std::int32_t w = bpe.vocab().id("w");

  std::vector<std::pair<std::string, nlohmann::json>> bad;
  bad.emplace_back("not an object", nlohmann::json::array({1, 2}));
  bad.emplace_back("null", nlohmann::json());
  auto with = [&](const std::string& name, auto&& change) {
    nlohmann::json j = good;
    change(j);
    bad.emplace_back(name, j);
  };
  with("wrong format", [](auto& j) { j["format"] = "sentencepiece"; });
  with("format missing", [](auto& j) { j.erase("format"); });
  with("newer version", [](auto& j) { j["version"] = 2; });
  with("version as string", [](auto& j) { j["version"] = "1"; });
  with("pieces missing", [](auto& j) { j.erase("pieces"); });
  with("pieces not array", [](auto& j) { j["pieces"] = "abc"; });
  with("too few pieces", [](auto& j) { j["pieces"] = nlohmann::json::array({"<pad>", "<unk>", "<s>", "</s>"}); });
  with("special renamed", [](auto& j) { j["pieces"][kBos] = "<bos>"; });
  with("byte piece renamed", [](auto& j) { j["pieces"][kFirstByte + 7] = "<0x7>"; });
  with("piece not a string", [](auto& j) { j["pieces"][kFirstLearned] = 42; });
  with("duplicate piece", [](auto& j) { j["pieces"][kFirstLearned + 1] = j["pieces"][kFirstLearned]; });
  with("empty piece", [](auto& j) { j["pieces"].push_back(""); });
  with("invalid UTF-8 piece", [](auto& j) { j["pieces"].push_back("\xC0\x80"); });
  with("merges missing", [](auto& j) { j.erase("merges"); });
  with("merge not a pair", [](auto& j) { j["merges"][0] = nlohmann::json::array({1}); });
  with("merge of strings", [](auto& j) { j["merges"][0] = nlohmann::json::array({"e", "s"}); });
  with("merge id out of range", [](auto& j) { j["merges"][0][1] = 100000; });
  with("merge of a byte piece", [](auto& j) { j["merges"][0][0] = kFirstByte; });
  with("merge of a negative id", [](auto& j) { j["merges"][0][0] = -5; });
  with("merge yields no piece", [&](auto& j) { j["merges"][0] = nlohmann::json::array({w, w}); });
  with("merge before its input exists", [&](auto& j) { std::swap(j["merges"][0], j["merges"][1]); });
  with("first merge dropped", [](auto& j) { j["merges"].erase(0); });
  with("multi-character piece nobody makes", [](auto& j) { j["pieces"].push_back("zz"); });
  with("marker spelt again", [](auto& j) { j["pieces"].push_back("\u2581\u2581"); });

  for (const auto& [name, json] : bad) {
    INFO(name);
    REQUIRE_THROWS_AS(Bpe::from_json(json), attn::Error);
  }
}

TEST_CASE("bpe: encode is safe from several threads at once", "[text]") {
  const Bpe bpe = Bpe::learn(small_corpus(), {.vocab_size = 450, .min_frequency = 1});
  std::vector<std::vector<std::int32_t>> expected;
  for (const std::string& line : small_corpus()) expected.push_back(bpe.encode(line));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        for (std::size_t i = 0; i < small_corpus().size(); ++i)
          if (bpe.encode(small_corpus()[i]) != expected[i]) ++mismatches[t];
    });
  for (std::thread& thread : threads) thread.join();
  REQUIRE(mismatches == std::vector<int>(4, 0));
}

namespace {

// The encoder's rule done the plain quadratic way: repeatedly merge the
// adjacent pair of lowest rank, the leftmost among equals. For one word of
// characters that each have a piece.
std::vector<std::int32_t> reference_word(const Bpe& bpe, std::string_view word) {
  std::vector<std::int32_t> symbols{kWordMarker};
  for (char c : word) symbols.push_back(bpe.vocab().id(std::string(1, c)));
  const auto& merges = bpe.merges();
  const auto rank_of = [&](std::int32_t left, std::int32_t right) {
    for (std::size_t r = 0; r < merges.size(); ++r)
      if (merges[r].first == left && merges[r].second == right) return static_cast<int>(r);
    return INT_MAX;
  };
  for (;;) {
    std::size_t best = 0;
    int best_rank = INT_MAX;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
      if (const int r = rank_of(symbols[i], symbols[i + 1]); r < best_rank) best_rank = r, best = i;
    if (best_rank == INT_MAX) return symbols;
    const auto& [left, right] = merges[static_cast<std::size_t>(best_rank)];
    symbols[best] = bpe.vocab().id(bpe.vocab().piece(left) + bpe.vocab().piece(right));
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

}  // namespace

TEST_CASE("bpe: encoding merges lowest rank first, leftmost among equals, as the plain quadratic rule does", "[text]") {
  // Runs of one letter (many equal-rank pairs side by side) and random words over few letters.
  std::vector<std::string> lines;
  for (int i = 0; i < 200; ++i) lines.push_back(std::string(1 + i % 13, 'a') + " ab" + std::string(i % 7, 'b') + "a");
  std::mt19937 gen(11);
  for (int i = 0; i < 300; ++i) {
    std::string word;
    for (int k = 0, n = 1 + static_cast<int>(gen() % 12); k < n; ++k) word += "abcd"[gen() % 4];
    lines.push_back(word);
  }
  const Bpe bpe = Bpe::learn(lines, {.vocab_size = 300, .min_frequency = 1});
  REQUIRE(bpe.merges().size() > 10);
  std::vector<std::string> words;
  for (int n = 1; n < 40; ++n) words.push_back(std::string(static_cast<std::size_t>(n), 'a'));
  for (int i = 0; i < 500; ++i) {
    std::string word;
    for (int k = 0, n = 1 + static_cast<int>(gen() % 60); k < n; ++k) word += "abcd"[gen() % 4];
    words.push_back(word);
  }
  for (const std::string& word : words) {
    INFO(word);
    REQUIRE(bpe.encode(word) == reference_word(bpe, word));
  }
}

TEST_CASE("bpe: a word of a million characters encodes (n log n: the quadratic rule took minutes)", "[text]") {
  std::vector<std::string> lines{"abcabc abab cab", "aaaa bbbb cccc abc"};
  const Bpe bpe = Bpe::learn(lines, {.vocab_size = 280, .min_frequency = 1});
  std::mt19937 gen(3);
  std::string word;
  for (int i = 0; i < 1'000'000; ++i) word += "abc"[gen() % 3];
  const std::vector<std::int32_t> ids = bpe.encode(word);
  REQUIRE(bpe.decode(ids) == word);
  REQUIRE(ids.size() < word.size() * 3 / 4);  // merged, not left as characters
  // A prefix is the start of the whole encoding, for every length.
  const std::string sentence = word.substr(0, 50) + " " + word.substr(50, 70) + " cab abc " + word.substr(200, 9);
  const std::vector<std::int32_t> whole = bpe.encode(sentence);
  for (std::size_t n = 0; n <= whole.size() + 2; ++n) {
    const std::vector<std::int32_t> prefix = bpe.encode_prefix(sentence, n);
    REQUIRE(prefix == std::vector<std::int32_t>(
                          whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(std::min(n, whole.size()))));
  }
  // And one character repeated: every pair has the same rank.
  const std::string same(1'000'000, 'a');
  REQUIRE(bpe.decode(bpe.encode(same)) == same);
}
