#include "attn/core/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>

#include "attn/core/atomic_file.h"
#include "attn/core/crc32.h"
#include "attn/core/error.h"

namespace attn {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; we write and read floats as they are in memory");
static_assert(sizeof(float) == 4);

using json = nlohmann::json;

// The reference implementation refuses headers above this size; so do we,
// which also bounds the memory a hostile header can make us spend.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// Our header is 3 levels deep (object, tensor entry, shape); leave room for
// harmless extra fields written by other tools, but no deeper.
constexpr std::size_t kMaxJsonDepth = 16;

const std::string kFormatKey = "format";
const std::string kFormatVersionKey = "format_version";
const std::string kDataCrcKey = "crc32";
const std::string kHeaderCrcKey = "header_crc32";
const std::string kMetadataKey = "__metadata__";

// A tensor as the header describes it. Offsets are bytes within the data section.
struct Record {
  std::string name;
  DType dtype = DType::F32;
  std::array<std::uint64_t, Shape::kMaxDims> dims{};
  int ndim = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

const char* dtype_name(DType dtype) { return dtype == DType::I8 ? "I8" : "F32"; }
std::uint64_t dtype_bytes(DType dtype) { return dtype == DType::I8 ? 1 : 4; }

std::string hex8(std::uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

bool parse_hex8(const std::string& text, std::uint32_t& value) {
  if (text.size() != 8) return false;
  value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return false;
    value = value << 4 | static_cast<std::uint32_t>(digit);
  }
  return true;
}

// Text from a file, fit for a one-line message: quoted, control bytes
// escaped, cut to a readable length.
std::string shown(const std::string& text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "'";
}

void append_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

void append_string(std::string& out, const std::string& text) {
  append_u64(out, text.size());
  out += text;
}

// An unambiguous (length-prefixed) encoding of everything the header means,
// independent of JSON spelling, key order and padding. header_crc32 is the
// CRC-32 of these bytes. Metadata in key order, then tensors in name order;
// a tensor's dtype only when it is not F32, so files from before I8 keep their CRC.
std::uint32_t header_crc(const std::map<std::string, std::string>& metadata, std::vector<Record> records) {
  std::string bytes;
  append_u64(bytes, metadata.size() - metadata.count(kHeaderCrcKey));
  for (const auto& [key, value] : metadata) {
    if (key == kHeaderCrcKey) continue;
    append_string(bytes, key);
    append_string(bytes, value);
  }
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.name < b.name; });
  append_u64(bytes, records.size());
  for (const Record& r : records) {
    append_string(bytes, r.name);
    append_u64(bytes, static_cast<std::uint64_t>(r.ndim));
    for (int i = 0; i < r.ndim; ++i) append_u64(bytes, r.dims[i]);
    append_u64(bytes, r.begin);
    append_u64(bytes, r.end);
    if (r.dtype != DType::F32) append_string(bytes, dtype_name(r.dtype));
  }
  return crc32(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

Shape make_shape(const Record& r) {
  const auto d = [&](int i) { return static_cast<std::int64_t>(r.dims[i]); };
  switch (r.ndim) {
    case 1: return Shape{d(0)};
    case 2: return Shape{d(0), d(1)};
    case 3: return Shape{d(0), d(1), d(2)};
    case 4: return Shape{d(0), d(1), d(2), d(3)};
    default: throw std::logic_error("make_shape: ndim out of range");
  }
}

// ---------------------------------------------------------------- writing

void write_u64_le(AtomicFile& file, std::uint64_t value) {
  std::string bytes;
  append_u64(bytes, value);
  file.write(bytes);
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata) {
  for (const std::string& key : {kFormatKey, kFormatVersionKey, kDataCrcKey, kHeaderCrcKey})
    if (metadata.count(key)) throw std::invalid_argument("write_safetensors: metadata key '" + key + "' is reserved");

  // F32 first, so that every F32 tensor starts on a multiple of 4 bytes.
  std::vector<const TensorRef*> stored;
  stored.reserve(tensors.size());
  for (const DType group : {DType::F32, DType::I8})
    for (const TensorRef& t : tensors)
      if (t.dtype == group) stored.push_back(&t);
  const auto bytes_of = [](const TensorRef& t) {
    return t.dtype == DType::I8 ? std::as_bytes(t.int8) : std::as_bytes(t.data);
  };

  std::vector<Record> records;
  records.reserve(stored.size());
  std::set<std::string> seen;
  std::uint64_t offset = 0;
  std::uint32_t data_crc = 0;
  bool has_int8 = false;
  for (const TensorRef* t : stored) {
    if (t->name == kMetadataKey || !seen.insert(t->name).second)
      throw std::invalid_argument("write_safetensors: tensor name '" + t->name + "' is reserved or repeated");
    if (t->shape.ndim() == 0)
      throw std::invalid_argument("write_safetensors: tensor '" + t->name + "' has no dimensions");
    const std::size_t count = t->dtype == DType::I8 ? t->int8.size() : t->data.size();
    const std::size_t other = t->dtype == DType::I8 ? t->data.size() : t->int8.size();
    if (count != static_cast<std::size_t>(t->shape.numel()) || other != 0)
      throw std::invalid_argument("write_safetensors: tensor '" + t->name + "' has " + std::to_string(count) + " " +
                                  dtype_name(t->dtype) + " values (and " + std::to_string(other) +
                                  " of the other type) for shape " + t->shape.str());
    Record r;
    r.name = t->name;
    r.dtype = t->dtype;
    r.ndim = t->shape.ndim();
    for (int i = 0; i < r.ndim; ++i) r.dims[i] = static_cast<std::uint64_t>(t->shape[i]);
    r.begin = offset;
    r.end = offset + bytes_of(*t).size();
    offset = r.end;
    records.push_back(std::move(r));
    data_crc = crc32(bytes_of(*t), data_crc);
    has_int8 = has_int8 || t->dtype == DType::I8;
  }

  std::map<std::string, std::string> full_metadata = metadata;
  full_metadata[kFormatKey] = "attn";
  // Version 1 when it can be: an attn from before I8 still reads the file.
  full_metadata[kFormatVersionKey] = std::to_string(has_int8 ? kSafetensorsFormatVersion : 1);
  full_metadata[kDataCrcKey] = hex8(data_crc);
  full_metadata[kHeaderCrcKey] = hex8(header_crc(full_metadata, records));

  // ordered_json keeps __metadata__ first and the tensors in the given order.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header[kMetadataKey] = full_metadata;
  for (const Record& r : records) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = dtype_name(r.dtype);
    entry["shape"] = std::vector<std::uint64_t>(r.dims.begin(), r.dims.begin() + r.ndim);
    entry["data_offsets"] = {r.begin, r.end};
    header[r.name] = std::move(entry);
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception&) {
    throw Error("cannot write " + path.string() + ": a metadata value or tensor name is not valid UTF-8");
  }
  // Spaces (allowed JSON whitespace) so the data section starts on a 64-byte
  // boundary of the file, which suits anyone who maps it.
  header_text.append((64 - (8 + header_text.size()) % 64) % 64, ' ');

  AtomicFile file(path);
  write_u64_le(file, header_text.size());
  file.write(header_text);
  for (const TensorRef* t : stored) file.write(bytes_of(*t));
  file.commit();
}

// ---------------------------------------------------------------- reading

namespace {

// SAX pass run before building the DOM: rejects what nlohmann::json would
// silently accept (a repeated key keeps only one value; unbounded nesting).
class HeaderSyntaxCheck : public nlohmann::json_sax<json> {
 public:
  std::string problem;  // empty when the header is fine

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    if (keys_.back().insert(key).second) return true;
    problem = "the key " + shown(key) + " appears twice";
    return false;
  }
  bool parse_error(std::size_t position, const std::string&, const json::exception&) override {
    problem = "its header is not valid JSON (at byte " + std::to_string(position) + " of the header)";
    return false;
  }

 private:
  bool open() {
    if (keys_.size() >= kMaxJsonDepth) {
      problem = "its header is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep";
      return false;
    }
    keys_.emplace_back();
    return true;
  }
  bool close() {
    keys_.pop_back();
    return true;
  }
  std::vector<std::set<std::string>> keys_;  // per open object or array
};

// Closes the descriptor on every exit path.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly `size` bytes unless the file ends first; returns the count read.
std::size_t read_fully(int fd, void* destination, std::size_t size, const std::filesystem::path& path) {
  auto* out = static_cast<unsigned char*>(destination);
  std::size_t done = 0;
  while (done < size) {
    const std::size_t chunk = std::min<std::size_t>(size - done, std::size_t{1} << 30);
    const ssize_t got = ::read(fd, out + done, chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

struct Reader {
  const std::filesystem::path& path;

  [[noreturn]] void not_attn(const std::string& why) const {
    throw Error(path.string() + ": not an attn model file (" + why + "); was it written by attn?");
  }
  [[noreturn]] void truncated(const std::string& why) const {
    throw Error(path.string() + ": truncated: " + why +
                "; the file was cut short (a full disk or an interrupted copy?) — use another checkpoint");
  }
  [[noreturn]] void corrupt(const std::string& why) const {
    throw Error(path.string() + ": corrupt: " + why + "; the file was damaged or truncated — use another checkpoint");
  }

  std::map<std::string, std::string> read_metadata(const json& header) const {
    const auto found = header.find(kMetadataKey);
    if (found == header.end() || found->is_null()) not_attn("its header has no __metadata__");
    if (!found->is_object()) corrupt("__metadata__ is not a JSON object");
    std::map<std::string, std::string> metadata;
    for (const auto& [key, value] : found->items()) {
      if (!value.is_string()) corrupt("metadata " + shown(key) + " is not a string");
      metadata.emplace(key, value.get<std::string>());
    }
    const auto format = metadata.find(kFormatKey);
    if (format == metadata.end()) not_attn("its metadata has no \"format\"");
    if (format->second != "attn") not_attn("its metadata says format " + shown(format->second));
    const auto version = metadata.find(kFormatVersionKey);
    if (version == metadata.end()) corrupt("its metadata has no format_version");
    const std::string& v = version->second;
    const bool numeric = !v.empty() && v.size() <= 9 &&
                         std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!numeric) corrupt("format_version " + shown(v) + " is not a number");
    if (std::stoi(v) > kSafetensorsFormatVersion)
      throw Error(path.string() + ": written by a newer attn (format version " + v + "; this attn reads up to " +
                  std::to_string(kSafetensorsFormatVersion) + "); upgrade attn to read it");
    return metadata;
  }

  Record read_record(const std::string& name, const json& entry) const {
    const std::string what = "tensor " + shown(name);
    if (!entry.is_object()) corrupt(what + " is not described by a JSON object");
    const auto dtype = entry.find("dtype");
    const auto shape = entry.find("shape");
    const auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || shape == entry.end() || offsets == entry.end())
      corrupt(what + " lacks dtype, shape or data_offsets");
    if (!dtype->is_string()) corrupt(what + " has a dtype that is not a string");
    const std::string dtype_text = dtype->get<std::string>();
    if (dtype_text != "F32" && dtype_text != "I8")
      throw Error(path.string() + ": " + what + " has dtype " + shown(dtype_text) +
                  "; attn reads only F32 and I8 tensors");
    if (!shape->is_array()) corrupt(what + " has a shape that is not a list");
    if (shape->empty()) throw Error(path.string() + ": " + what + " is a 0-d scalar; attn stores scalars as shape [1]");
    if (shape->size() > static_cast<std::size_t>(Shape::kMaxDims))
      throw Error(path.string() + ": " + what + " has " + std::to_string(shape->size()) +
                  " dimensions; attn supports at most " + std::to_string(Shape::kMaxDims));
    Record r;
    r.name = name;
    r.dtype = dtype_text == "I8" ? DType::I8 : DType::F32;
    r.ndim = static_cast<int>(shape->size());
    // Shape::numel multiplies left to right in int64, so the product of the
    // non-zero dims must fit even when another dim is 0.
    std::uint64_t nonzero_product = 1;
    std::uint64_t numel = 1;
    for (int i = 0; i < r.ndim; ++i) {
      const json& dim = (*shape)[static_cast<std::size_t>(i)];
      if (!dim.is_number_unsigned()) corrupt(what + " has a shape entry that is not a whole number");
      r.dims[i] = dim.get<std::uint64_t>();
      if (r.dims[i] != 0 && (__builtin_mul_overflow(nonzero_product, r.dims[i], &nonzero_product) ||
                             nonzero_product > static_cast<std::uint64_t>(INT64_MAX)))
        corrupt(what + " has an impossibly large shape");
      numel *= r.dims[i];  // cannot overflow: bounded by nonzero_product
    }
    if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      corrupt(what + " has data_offsets that are not two whole numbers");
    r.begin = (*offsets)[0].get<std::uint64_t>();
    r.end = (*offsets)[1].get<std::uint64_t>();
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(numel, dtype_bytes(r.dtype), &bytes) || r.end < r.begin || r.end - r.begin != bytes)
      corrupt(what + " has shape " + make_shape(r).str() + " but data_offsets [" + std::to_string(r.begin) + ", " +
              std::to_string(r.end) + "]");
    return r;
  }
};

}  // namespace

SafetensorsFile SafetensorsFile::read(const std::filesystem::path& path) { return load(path, true); }
SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) { return load(path, false); }

SafetensorsFile::OpenFile::~OpenFile() { ::close(fd_); }

SafetensorsFile SafetensorsFile::load(const std::filesystem::path& path, bool hold_data) {
  const Reader reader{path};
  FileDescriptor file;
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is rejected below);
  // a regular file reads the same with it.
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) {
    if (errno == ENOENT) throw Error(path.string() + ": no such file; check the path");
    throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw Error(path.string() + ": not a regular file; give the path of a model file");
  const auto file_size = static_cast<std::uint64_t>(status.st_size);

  unsigned char length_bytes[8];
  if (file_size < 8 || read_fully(file.fd, length_bytes, 8, path) != 8)
    reader.not_attn("only " + std::to_string(file_size) + " bytes; a model file starts with an 8-byte header length");
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | length_bytes[i];
  if (header_size > file_size - 8)
    reader.not_attn("its header length " + std::to_string(header_size) +
                    " plus the 8-byte length prefix exceeds the file size " + std::to_string(file_size) +
                    "; or the file was truncated");
  if (header_size > kMaxHeaderBytes)
    reader.not_attn("its header length " + std::to_string(header_size) + " exceeds the 100 MB limit");

  std::string header_text(header_size, '\0');
  if (read_fully(file.fd, header_text.data(), header_size, path) != header_size)
    reader.truncated("the file ended inside the header");
  HeaderSyntaxCheck syntax;
  if (!json::sax_parse(header_text, &syntax)) {
    if (syntax.problem.empty()) syntax.problem = "its header is not valid JSON";
    reader.not_attn(syntax.problem);
  }
  json header;
  try {
    header = json::parse(header_text);
  } catch (const json::exception&) {
    reader.not_attn("its header is not valid JSON");
  }
  if (!header.is_object()) reader.not_attn("its header is not a JSON object");

  SafetensorsFile result;
  result.path_ = path;
  result.metadata_ = reader.read_metadata(header);

  std::vector<Record> records;
  records.reserve(header.size());
  for (const auto& [name, entry] : header.items())
    if (name != kMetadataKey) records.push_back(reader.read_record(name, entry));
  // The data section must be covered exactly, without gaps or overlaps, as
  // the safetensors reference reader demands.
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t covered = 0;
  for (const Record& r : records) {
    if (r.begin != covered)
      reader.corrupt("tensor " + shown(r.name) + " starts at byte " + std::to_string(r.begin) +
                     " of the data but the tensors before it end at byte " + std::to_string(covered));
    if (r.dtype == DType::F32 && r.begin % 4 != 0)
      reader.corrupt("F32 tensor " + shown(r.name) + " starts at byte " + std::to_string(r.begin) +
                     ", not a multiple of 4");
    covered = r.end;
  }
  const std::uint64_t data_size = file_size - 8 - header_size;
  if (data_size < covered)
    reader.truncated("the header describes " + std::to_string(covered) + " bytes of tensor data but only " +
                     std::to_string(data_size) + " are present");
  if (data_size > covered)
    reader.corrupt(std::to_string(data_size - covered) + " unexpected bytes follow the tensor data");

  std::uint32_t stored_header_crc = 0;
  std::uint32_t stored_data_crc = 0;
  const auto header_crc_text = result.metadata_.find(kHeaderCrcKey);
  const auto data_crc_text = result.metadata_.find(kDataCrcKey);
  if (header_crc_text == result.metadata_.end() || !parse_hex8(header_crc_text->second, stored_header_crc) ||
      data_crc_text == result.metadata_.end() || !parse_hex8(data_crc_text->second, stored_data_crc))
    reader.corrupt("its metadata lacks a valid crc32 or header_crc32");
  if (header_crc(result.metadata_, records) != stored_header_crc) reader.corrupt("header checksum mismatch");

  std::uint32_t data_crc = 0;
  if (hold_data) {
    // The data section gets its own aligned buffer, so every F32 tensor (their
    // offsets are multiples of 4) is a properly aligned float array.
    result.data_ = allocate_floats(static_cast<std::size_t>((covered + 3) / 4), Pages::populated);
    if (read_fully(file.fd, result.data_.get(), covered, path) != covered)
      reader.truncated("the file ended inside the tensor data");
    const auto* data_bytes = reinterpret_cast<const std::byte*>(result.data_.get());
    data_crc = crc32(std::span(data_bytes, static_cast<std::size_t>(covered)));
  } else {
    std::vector<std::byte> chunk(std::size_t{1} << 20);
    for (std::uint64_t done = 0; done < covered;) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), covered - done));
      if (read_fully(file.fd, chunk.data(), want, path) != want)
        reader.truncated("the file ended inside the tensor data");
      data_crc = crc32(std::span(chunk.data(), want), data_crc);
      done += want;
    }
    result.data_start_ = 8 + header_size;
    result.file_ = std::make_shared<const OpenFile>(file.fd);
    file.fd = -1;  // closed by result.file_ now
  }
  if (data_crc != stored_data_crc)
    reader.corrupt("checksum mismatch (stored " + hex8(stored_data_crc) + ", computed " + hex8(data_crc) + ")");

  result.entries_.reserve(records.size());
  for (const Record& r : records) {
    result.index_.emplace(r.name, result.entries_.size());
    result.entries_.push_back(Entry{r.name, make_shape(r), r.dtype, static_cast<std::size_t>(r.begin),
                                    static_cast<std::size_t>((r.end - r.begin) / dtype_bytes(r.dtype))});
  }
  return result;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const Entry& e : entries_) names.push_back(e.name);
  return names;
}

const SafetensorsFile::Entry& SafetensorsFile::entry(const std::string& name) const {
  const auto found = index_.find(name);
  if (found == index_.end()) throw Error("model file " + path_.string() + " has no tensor " + shown(name));
  return entries_[found->second];
}

Shape SafetensorsFile::shape(const std::string& name) const { return entry(name).shape; }
DType SafetensorsFile::dtype(const std::string& name) const { return entry(name).dtype; }

const SafetensorsFile::Entry& SafetensorsFile::entry_of(const std::string& name, DType dtype) const {
  const Entry& e = entry(name);
  if (e.dtype != dtype)
    throw Error("model file " + path_.string() + ": tensor " + shown(name) + " holds " + dtype_name(e.dtype) +
                " values, not " + dtype_name(dtype));
  return e;
}

std::optional<std::map<std::string, std::string>> attn_file_metadata(const std::filesystem::path& path) {
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat status {};
  if (file.fd < 0 || ::fstat(file.fd, &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  const auto file_size = static_cast<std::uint64_t>(status.st_size);
  unsigned char length_bytes[8];
  if (file_size < 8 || ::pread(file.fd, length_bytes, 8, 0) != 8) return std::nullopt;
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | length_bytes[i];
  if (header_size < 2 || header_size > file_size - 8 || header_size > kMaxHeaderBytes) return std::nullopt;
  std::string header_text(header_size, '\0');
  std::uint64_t got = 0;
  while (got < header_size) {
    const ssize_t n = ::pread(file.fd, header_text.data() + got, header_size - got, static_cast<off_t>(8 + got));
    if (n <= 0) return std::nullopt;
    got += static_cast<std::uint64_t>(n);
  }
  const json header = json::parse(header_text, nullptr, false);
  if (!header.is_object()) return std::nullopt;
  const auto found = header.find(kMetadataKey);
  if (found == header.end() || !found->is_object()) return std::nullopt;
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : found->items())
    if (value.is_string()) metadata[key] = value.get<std::string>();
  const auto format = metadata.find(kFormatKey);
  if (format == metadata.end() || format->second != "attn") return std::nullopt;
  return metadata;
}

std::span<const float> SafetensorsFile::data(const std::string& name) const {
  const Entry& e = entry_of(name, DType::F32);
  if (!data_) throw std::logic_error("SafetensorsFile::data: the file was opened, not read");
  return {data_.get() + e.first_byte / 4, e.numel};
}

std::span<const std::int8_t> SafetensorsFile::int8(const std::string& name) const {
  const Entry& e = entry_of(name, DType::I8);
  if (!data_) throw std::logic_error("SafetensorsFile::int8: the file was opened, not read");
  return {reinterpret_cast<const std::int8_t*>(data_.get()) + e.first_byte, e.numel};
}

const SafetensorsFile::Entry& SafetensorsFile::checked(const std::string& name, DType dtype, const Shape& expected,
                                                       std::size_t count) const {
  const Entry& e = entry_of(name, dtype);
  if (!(e.shape == expected))
    throw Error("model file " + path_.string() + ": tensor " + shown(name) + " has shape " + e.shape.str() + " but " +
                expected.str() + " is expected; was it written for another model configuration?");
  if (count != e.numel)
    throw std::invalid_argument("SafetensorsFile: the destination holds " + std::to_string(count) +
                                " values for shape " + expected.str());
  return e;
}

void SafetensorsFile::copy_bytes(const Entry& e, void* dst) const {
  const std::size_t bytes = e.numel * dtype_bytes(e.dtype);
  if (data_) {
    std::memcpy(dst, reinterpret_cast<const unsigned char*>(data_.get()) + e.first_byte, bytes);
    return;
  }
  auto* out = static_cast<unsigned char*>(dst);
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t got = ::pread(file_->fd(), out + done, std::min<std::size_t>(bytes - done, std::size_t{1} << 30),
                                static_cast<off_t>(data_start_ + e.first_byte + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error("cannot read " + path_.string() + ": " + std::strerror(errno));
    if (got == 0) throw Error(path_.string() + ": the file was cut short while it was read; use another checkpoint");
    done += static_cast<std::size_t>(got);
  }
}

void SafetensorsFile::copy_to(const std::string& name, const Shape& expected, std::span<float> dst) const {
  copy_bytes(checked(name, DType::F32, expected, dst.size()), dst.data());
}

void SafetensorsFile::copy_int8_to(const std::string& name, const Shape& expected, std::span<std::int8_t> dst) const {
  copy_bytes(checked(name, DType::I8, expected, dst.size()), dst.data());
}

}  // namespace attn
