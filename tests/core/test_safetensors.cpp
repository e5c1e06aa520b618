#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../support.h"
#include "attn/core/crc32.h"
#include "attn/core/error.h"
#include "attn/core/safetensors.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

using TempDir = test::ScratchDir;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  // A fresh file, not a truncated one: ext4 flushes truncated-and-rewritten
  // files to disk on close, which would make the fuzz loop crawl.
  fs::remove(path);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string u64_le(std::uint64_t value) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((value >> (8 * i)) & 0xFF);
  return bytes;
}

// A file from a hand-written header (unpadded) and data bytes.
std::string raw_file(const std::string& header, const std::string& data) {
  return u64_le(header.size()) + header + data;
}

// A JSON object's text from its members' (built without "{" + a temporary, which GCC 12's
// -Wrestrict misreads).
std::string braced(const std::string& members) { return "{" + members + "}"; }

// Valid attn metadata except for the checksums, which the checks before the
// checksum comparison do not look at.
std::string attn_metadata(const std::string& version = "1") {
  return R"("__metadata__":{"format":"attn","format_version":")" + version +
         R"(","crc32":"00000000","header_crc32":"00000000"})";
}

// The message of the Error that reading `bytes` as a model file throws.
std::string read_error(const TempDir& dir, const std::string& bytes) {
  const fs::path path = dir / "bad.attn";
  write_bytes(path, bytes);
  try {
    SafetensorsFile::read(path);
  } catch (const Error& e) {
    const std::string message = e.what();
    REQUIRE(message.find(path.string()) != std::string::npos);
    REQUIRE(message.find('\n') == std::string::npos);
    return message;
  }
  FAIL("no Error reading a bad file");
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Sample {
  std::vector<std::string> names{"enc.0.w", "b", "big4d", "empty", "a.last"};
  std::vector<Shape> shapes{Shape{3, 5}, Shape{7}, Shape{2, 3, 4, 5}, Shape{0, 4}, Shape{1}};
  std::vector<std::vector<float>> values;
  std::map<std::string, std::string> metadata{{"config", R"({"arch": "muse", "d": 512})"},
                                              {"note", "h\xC3\xA9llo \"quoted\"\nline two\ttab"},
                                              {"empty", ""}};

  Sample() {
    for (std::size_t i = 0; i < names.size(); ++i)
      values.push_back(test::random_vector(static_cast<std::size_t>(shapes[i].numel()), 100 + i, -3.0f, 3.0f));
    // Values whose bits matter: signed zero, subnormal, infinities, NaN.
    values[1] = {-0.0f,
                 1e-45f,
                 std::numeric_limits<float>::infinity(),
                 -std::numeric_limits<float>::infinity(),
                 std::numeric_limits<float>::quiet_NaN(),
                 3.4e38f,
                 1.0f};
  }
  std::vector<TensorRef> refs() const {
    std::vector<TensorRef> refs;
    for (std::size_t i = 0; i < names.size(); ++i) refs.push_back({names[i], shapes[i], values[i]});
    return refs;
  }
  // True when `file` holds exactly this sample, bit for bit.
  bool matches(const SafetensorsFile& file) const {
    if (file.names() != names) return false;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!(file.shape(names[i]) == shapes[i])) return false;
      const std::span<const float> got = file.data(names[i]);
      if (got.size() != values[i].size() ||
          (!got.empty() && std::memcmp(got.data(), values[i].data(), got.size_bytes()) != 0))
        return false;
    }
    for (const auto& [key, value] : metadata) {
      const auto found = file.metadata().find(key);
      if (found == file.metadata().end() || found->second != value) return false;
    }
    return file.metadata().size() == metadata.size() + 4;
  }
};

}  // namespace

TEST_CASE("crc32: known answers, incremental, agrees with the bitwise definition", "[io]") {
  const std::string check = "123456789";
  REQUIRE(crc32(std::as_bytes(std::span(check.data(), check.size()))) == 0xCBF43926u);
  REQUIRE(crc32({}) == 0u);
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  REQUIRE(crc32(std::as_bytes(std::span(fox.data(), fox.size()))) == 0x414FA339u);

  // Bit-at-a-time reference straight from the polynomial.
  const auto reference = [](const unsigned char* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) {
      c ^= p[i];
      for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
  };
  Rng rng(7);
  std::vector<unsigned char> bytes(5000);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng.next_u32());
  const Isa saved = active_isa();
  for (Isa isa : test::supported_isas()) {  // scalar: tables; others: PCLMULQDQ folding
    set_active_isa(isa);
    INFO("isa " << isa_name(isa));
    for (std::size_t start : {0, 1, 3, 7}) {
      for (std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 143, 191, 192, 1000, 4993}) {
        const auto* p = reinterpret_cast<const std::byte*>(bytes.data() + start);
        const std::uint32_t whole = crc32({p, n});
        REQUIRE(whole == reference(bytes.data() + start, n));
        for (std::size_t split : {std::size_t{0}, n / 3, n / 2, n}) {
          REQUIRE(crc32({p + split, n - split}, crc32({p, split})) == whole);
        }
      }
    }
  }
  set_active_isa(saved);
}

TEST_CASE("safetensors: round trip keeps names, order, shapes, bits and metadata", "[io]") {
  TempDir dir;
  const Sample sample;
  const fs::path path = dir / "model.attn";
  write_safetensors(path, sample.refs(), sample.metadata);
  const SafetensorsFile file = SafetensorsFile::read(path);
  REQUIRE(sample.matches(file));
  REQUIRE(file.metadata().at("format") == "attn");
  REQUIRE(file.metadata().at("format_version") == "1");
  REQUIRE(file.metadata().at("crc32").size() == 8);
  REQUIRE(file.contains("b"));
  REQUIRE_FALSE(file.contains("c"));
  REQUIRE(file.data("empty").empty());

  // Layout: 8-byte length, header padded so the data starts 64-byte aligned,
  // header starting with '{' and listing __metadata__ first.
  const std::string bytes = read_bytes(path);
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  REQUIRE((8 + header_size) % 64 == 0);
  REQUIRE(bytes.compare(8, 16, "{\"__metadata__\":") == 0);
  std::size_t data_bytes = 0;
  for (const auto& v : sample.values) data_bytes += v.size() * 4;
  REQUIRE(bytes.size() == 8 + header_size + data_bytes);
  // The data section is the tensors back to back, in the order given.
  REQUIRE(std::memcmp(bytes.data() + 8 + header_size, sample.values[0].data(), 60) == 0);

  std::vector<float> dst(15);
  file.copy_to("enc.0.w", Shape{3, 5}, dst);
  REQUIRE(std::memcmp(dst.data(), sample.values[0].data(), 60) == 0);

  // Writing again over an existing file replaces it.
  const std::vector<float> one{42.0f};
  const TensorRef single{"only", Shape{1}, one};
  write_safetensors(path, std::span(&single, 1), {});
  const SafetensorsFile replaced = SafetensorsFile::read(path);
  REQUIRE(replaced.names() == std::vector<std::string>{"only"});
  REQUIRE(replaced.data("only")[0] == 42.0f);
  REQUIRE(replaced.metadata().size() == 4);
}

TEST_CASE("safetensors: empty tensor list, one element, one million floats", "[io]") {
  TempDir dir;
  write_safetensors(dir / "none.attn", {}, {{"k", "v"}});
  const SafetensorsFile none = SafetensorsFile::read(dir / "none.attn");
  REQUIRE(none.names().empty());
  REQUIRE(none.metadata().at("k") == "v");

  const std::vector<float> big = test::random_vector(1 << 20, 5);
  const std::vector<float> tiny{-1.5f};
  const std::vector<TensorRef> refs{{"tiny", Shape{1, 1}, tiny}, {"big", Shape{1024, 1024}, big}};
  write_safetensors(dir / "big.attn", refs, {});
  const SafetensorsFile file = SafetensorsFile::read(dir / "big.attn");
  REQUIRE(file.names() == std::vector<std::string>{"tiny", "big"});
  REQUIRE(file.shape("big") == Shape({1024, 1024}));
  REQUIRE(file.data("tiny")[0] == -1.5f);
  REQUIRE(std::memcmp(file.data("big").data(), big.data(), big.size() * 4) == 0);
  REQUIRE(reinterpret_cast<std::uintptr_t>(file.data("tiny").data()) % 64 == 0);
}

TEST_CASE("safetensors: wrong use of the writer and of copy_to", "[io]") {
  TempDir dir;
  const std::vector<float> six(6, 1.0f);
  const std::vector<TensorRef> repeated{{"w", Shape{6}, six}, {"w", Shape{6}, six}};
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", repeated, {}), std::invalid_argument);
  const TensorRef wrong_size{"w", Shape{2, 2}, six};
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", std::span(&wrong_size, 1), {}), std::invalid_argument);
  const TensorRef reserved{"__metadata__", Shape{6}, six};
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", std::span(&reserved, 1), {}), std::invalid_argument);
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", {}, {{"crc32", "0"}}), std::invalid_argument);
  REQUIRE_FALSE(fs::exists(dir / "x"));

  const TensorRef w{"w", Shape{2, 3}, six};
  write_safetensors(dir / "m.attn", std::span(&w, 1), {});
  const SafetensorsFile file = SafetensorsFile::read(dir / "m.attn");
  std::vector<float> dst(6);
  try {
    file.copy_to("w", Shape{3, 2}, dst);
    FAIL("no Error for a shape mismatch");
  } catch (const Error& e) {
    const std::string message = e.what();
    REQUIRE(contains(message, "'w'"));
    REQUIRE(contains(message, "[2, 3]"));
    REQUIRE(contains(message, "[3, 2]"));
    REQUIRE(contains(message, (dir / "m.attn").string()));
  }
  try {
    file.shape("missing");
    FAIL("no Error for a missing tensor");
  } catch (const Error& e) {
    REQUIRE(std::string(e.what()) == "model file " + (dir / "m.attn").string() + " has no tensor 'missing'");
  }
  REQUIRE_THROWS_AS(file.data("missing"), Error);
  REQUIRE_THROWS_AS(file.copy_to("missing", Shape{2, 3}, dst), Error);
}

TEST_CASE("safetensors: I8 tensors beside F32 ones: F32 stored first and aligned, bits kept, dtype checked", "[io]") {
  TempDir dir;
  const std::vector<float> a = test::random_vector(7, 1), b = test::random_vector(4, 2);
  const std::vector<std::int8_t> q{-128, -127, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 126, 127}, r{-5};
  const std::vector<TensorRef> refs{{"q", Shape{3, 5}, {}, DType::I8, q},
                                    {"a", Shape{7}, a},
                                    {"r", Shape{1}, {}, DType::I8, r},
                                    {"b", Shape{2, 2}, b},
                                    {"e", Shape{0, 3}, {}, DType::I8, {}}};
  write_safetensors(dir / "mixed.attn", refs, {{"k", "v"}});
  const SafetensorsFile file = SafetensorsFile::read(dir / "mixed.attn");
  REQUIRE(file.names() == std::vector<std::string>{"a", "b", "q", "r", "e"});
  REQUIRE(file.metadata().at("format_version") == "2");
  REQUIRE(file.dtype("a") == DType::F32);
  REQUIRE(file.dtype("q") == DType::I8);
  REQUIRE(file.shape("q") == Shape({3, 5}));
  REQUIRE(std::equal(q.begin(), q.end(), file.int8("q").begin(), file.int8("q").end()));
  REQUIRE(std::equal(r.begin(), r.end(), file.int8("r").begin(), file.int8("r").end()));
  REQUIRE(file.int8("e").empty());
  REQUIRE(std::memcmp(file.data("b").data(), b.data(), 16) == 0);
  REQUIRE(reinterpret_cast<std::uintptr_t>(file.data("b").data()) % 4 == 0);
  // The data section: 7 + 4 floats, then 15 + 1 bytes.
  const std::string bytes = read_bytes(dir / "mixed.attn");
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  REQUIRE(bytes.size() == 8 + header_size + 44 + 16);
  REQUIRE(contains(bytes.substr(8, header_size), R"("q":{"dtype":"I8","shape":[3,5],"data_offsets":[44,59]})"));

  // Asking for the other type is an Error naming the tensor and both types.
  const auto message = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no Error");
  };
  std::vector<float> dst(15);
  REQUIRE(contains(message([&] { (void)file.data("q"); }), "'q' holds I8 values, not F32"));
  REQUIRE(contains(message([&] { (void)file.int8("a"); }), "'a' holds F32 values, not I8"));
  REQUIRE(contains(message([&] { file.copy_to("q", Shape{3, 5}, dst); }), "not F32"));
  // A file with no I8 tensor stays format version 1, readable by an attn from before them.
  write_safetensors(dir / "plain.attn", std::span(&refs[1], 1), {});
  REQUIRE(SafetensorsFile::read(dir / "plain.attn").metadata().at("format_version") == "1");
  // Both spans given, or the count wrong for the dtype: a programming error.
  const TensorRef both{"w", Shape{1}, std::span(a.data(), 1), DType::I8, std::span(r.data(), 1)};
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", std::span(&both, 1), {}), std::invalid_argument);
  const TensorRef short_i8{"w", Shape{2}, {}, DType::I8, r};
  REQUIRE_THROWS_AS(write_safetensors(dir / "x", std::span(&short_i8, 1), {}), std::invalid_argument);
}

TEST_CASE("safetensors: every kind of bad file is a one-line Error that says what to do", "[io]") {
  TempDir dir;
  const std::string four_floats(16, '\0');
  const std::string entry = R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";

  SECTION("missing or not a file") {
    try {
      SafetensorsFile::read(dir / "nope.attn");
      FAIL("no Error");
    } catch (const Error& e) {
      REQUIRE(contains(e.what(), "nope.attn: no such file"));
    }
    REQUIRE_THROWS_WITH(SafetensorsFile::read(dir.path()), Catch::Contains("not a regular file"));
  }
  SECTION("too short for the header length") {
    for (std::size_t n = 0; n < 8; ++n) {
      const std::string message = read_error(dir, std::string(n, '\x01'));
      REQUIRE(contains(message, "not an attn model file"));
      REQUIRE(contains(message, "was it written by attn?"));
    }
  }
  SECTION("header length beyond the file") {
    REQUIRE(contains(read_error(dir, u64_le(100) + "{}"), "exceeds the file size"));
    REQUIRE(contains(read_error(dir, u64_le(~std::uint64_t{0}) + "{}"), "exceeds the file size"));
    // One byte short: the length counts the 8-byte prefix beside the header (3 + 8 > 10).
    const std::string short_by_one = read_error(dir, u64_le(3) + "{}");
    REQUIRE(contains(short_by_one, "header length 3 plus the 8-byte length prefix exceeds the file size 10"));
    // A text file given by mistake: its first 8 bytes make a huge length.
    REQUIRE(contains(read_error(dir, "the cat sat on the mat\n"), "not an attn model file"));
  }
  SECTION("header not JSON, not an object, repeated keys, too deep") {
    REQUIRE(contains(read_error(dir, raw_file("{\"a\":", "")), "not valid JSON"));
    REQUIRE(contains(read_error(dir, raw_file("\xFF\xFE", "")), "not valid JSON"));
    REQUIRE(contains(read_error(dir, raw_file("[1,2]", "")), "not a JSON object"));
    REQUIRE(contains(read_error(dir, raw_file(braced(attn_metadata() + "," + entry + "," + entry), four_floats)),
                     "'w' appears twice"));
    const std::string deep = "{\"x\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
    REQUIRE(contains(read_error(dir, raw_file(deep, "")), "nested more than"));
  }
  SECTION("not ours: no metadata, another format") {
    // What Python's safetensors writes for a plain dict of tensors.
    REQUIRE(contains(read_error(dir, raw_file(braced(entry), four_floats)), "not an attn model file"));
    const std::string pt = R"({"__metadata__":{"format":"pt"},)" + entry + "}";
    const std::string message = read_error(dir, raw_file(pt, four_floats));
    REQUIRE(contains(message, "not an attn model file"));
    REQUIRE(contains(message, "'pt'"));
    REQUIRE(contains(read_error(dir, raw_file(R"({"__metadata__":{"format":7}})", "")), "not a string"));
  }
  SECTION("newer format version") {
    const std::string message = read_error(dir, raw_file(braced(attn_metadata("3") + "," + entry), four_floats));
    REQUIRE(contains(message, "newer attn"));
    REQUIRE(contains(message, "upgrade"));
    REQUIRE(contains(read_error(dir, raw_file(braced(attn_metadata("1x")), "")), "not a number"));
  }
  SECTION("bad tensor entries") {
    const auto with = [&](const std::string& tensor, const std::string& data) {
      return read_error(dir, raw_file(braced(attn_metadata() + "," + tensor), data));
    };
    const std::string f16 = with(R"("w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]})", std::string(8, '\0'));
    REQUIRE(contains(f16, "'w' has dtype 'F16'"));
    REQUIRE(contains(f16, "only F32 and I8"));
    REQUIRE(contains(with(R"("w":{"dtype":"I8","shape":[2,2],"data_offsets":[0,16]})", four_floats),
                     "shape [2, 2] but data_offsets [0, 16]"));
    REQUIRE(contains(with(R"("q":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},)"
                          R"("w":{"dtype":"F32","shape":[3],"data_offsets":[3,15]})",
                          std::string(15, '\0')),
                     "F32 tensor 'w' starts at byte 3, not a multiple of 4"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]})", four_floats),
                     "shape [2, 3] but data_offsets [0, 16]"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[2,-2],"data_offsets":[0,16]})", four_floats),
                     "not a whole number"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16.0]})", four_floats),
                     "data_offsets that are not two whole numbers"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]})", four_floats), "data_offsets"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[2,2]})", four_floats), "lacks"));
    REQUIRE(contains(with(R"("w":[1])", four_floats), "not described by a JSON object"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[1,1,1,1,4],"data_offsets":[0,16]})", four_floats),
                     "at most 4"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[],"data_offsets":[0,4]})", std::string(4, '\0')),
                     "0-d scalar"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})", ""),
                     "impossibly large"));
    REQUIRE(contains(with(R"("w":{"dtype":"F32","shape":[18446744073709551615,4],"data_offsets":[0,0]})", ""),
                     "impossibly large"));
    // Offsets past the data, overlapping, or leaving a gap.
    REQUIRE(contains(with(entry, std::string(8, '\0')), "truncated"));
    const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)";
    REQUIRE(contains(with(a + R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]})", std::string(12, '\0')),
                     "'b' starts at byte 4"));
    REQUIRE(contains(with(a + R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]})", four_floats),
                     "'b' starts at byte 12"));
    REQUIRE(contains(with(entry, four_floats + "junk"), "4 unexpected bytes"));
    REQUIRE(contains(with(entry, four_floats), "header checksum mismatch"));  // placeholder checksums
    const std::string no_crc = R"("__metadata__":{"format":"attn","format_version":"1"},)";
    REQUIRE(contains(read_error(dir, raw_file(braced(no_crc + entry), four_floats)), "lacks a valid crc32"));
  }
  SECTION("damaged or truncated files written by us") {
    const Sample sample;
    const fs::path good = dir / "good.attn";
    write_safetensors(good, sample.refs(), sample.metadata);
    const std::string bytes = read_bytes(good);

    std::string flipped = bytes;
    flipped[bytes.size() - 5] ^= 0x10;  // inside the data of the last tensors
    const std::string message = read_error(dir, flipped);
    REQUIRE(contains(message, "corrupt: checksum mismatch"));
    REQUIRE(contains(message, "use another checkpoint"));

    const std::string cut = read_error(dir, bytes.substr(0, bytes.size() - 4));
    REQUIRE(contains(cut, "truncated"));
    REQUIRE(contains(cut, "use another checkpoint"));

    // A damaged metadata value that is still valid JSON.
    std::string renamed = bytes;
    const std::size_t at = renamed.find("muse");
    REQUIRE(at != std::string::npos);
    renamed[at] = 'n';
    REQUIRE(contains(read_error(dir, renamed), "header checksum mismatch"));
  }
}

TEST_CASE("safetensors: damaged files either load identically or throw Error (fuzz)", "[io]") {
  TempDir dir;
  Sample sample;
  for (auto& v : sample.values) v.resize(std::min<std::size_t>(v.size(), 40));
  sample.shapes = {Shape{5, 3}, Shape{7}, Shape{2, 4, 5}, Shape{0, 4}, Shape{1}};
  sample.values[0].resize(15);
  const fs::path good = dir / "good.attn";
  write_safetensors(good, sample.refs(), sample.metadata);
  const std::string bytes = read_bytes(good);
  const fs::path bad = dir / "bad.attn";

  int loaded = 0;
  int rejected = 0;
  const auto attempt = [&](const std::string& damaged) {
    write_bytes(bad, damaged);
    try {
      const SafetensorsFile file = SafetensorsFile::read(bad);
      REQUIRE(sample.matches(file));
      ++loaded;
    } catch (const Error& e) {
      REQUIRE(std::string(e.what()).find('\n') == std::string::npos);
      ++rejected;
    }
  };
  for (std::size_t n = 0; n < bytes.size(); ++n) attempt(bytes.substr(0, n));
  REQUIRE(loaded == 0);

  Rng rng(2024);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    const int flips = 1 + static_cast<int>(rng.below(3));
    for (int f = 0; f < flips; ++f) {
      // Bias towards the length field and the header, where parsing happens.
      const std::size_t limit = trial % 2 ? bytes.size() : std::min<std::size_t>(bytes.size(), 64);
      damaged[rng.below(limit)] ^= static_cast<char>(1 + rng.below(255));
    }
    attempt(damaged);
  }
  // Growing the file must not pass either.
  attempt(bytes + std::string(4, '\0'));
  INFO("loaded " << loaded << ", rejected " << rejected);
  REQUIRE(rejected > 3000);
}
