#include "attn/core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "attn/core/error.h"

namespace attn {
namespace {

const std::string kTempTag = ".tmp-";  // temporary names: ".<final name>.tmp-<pid>-<n>"

std::filesystem::path directory_of(const std::filesystem::path& path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// Makes the rename itself durable; best effort, since some file systems
// refuse fsync on a directory and the data is already safe by then.
void sync_directory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

void remove_abandoned_temporaries(const std::filesystem::path& directory) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();  // ".<final name>.tmp-<pid>-<n>"
    const std::size_t tag = name.rfind(kTempTag);
    if (name.empty() || name[0] != '.' || tag == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + tag + kTempTag.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
  }
}

AtomicFile::AtomicFile(std::filesystem::path final_path) : final_path_(std::move(final_path)) {
  if (final_path_.filename().empty())
    throw Error("cannot write '" + final_path_.string() + "': the path names a directory, not a file");
  struct stat existing {};
  if (::stat(final_path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISDIR(existing.st_mode)) {
    in_place_ = true;
    stream_ = std::fopen(final_path_.c_str(), "wb");
    if (!stream_)
      throw Error("cannot write " + final_path_.string() + ": " + std::strerror(errno));
    return;
  }
  const std::filesystem::path directory = directory_of(final_path_);
  // pid + process-wide counter make the name unique between threads and
  // processes; O_EXCL makes sure we never adopt someone else's file.
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    std::string name = ".";
    name += final_path_.filename().string();
    name += kTempTag + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    temp_path_ = directory / name;
    // 0666 lets the umask decide the final permissions, as for any new file.
    fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int error_number = errno;
    if (error_number == ENOENT)
      throw Error("cannot write " + final_path_.string() + ": directory " + directory.string() +
                  " does not exist; create it first");
    throw Error("cannot write " + final_path_.string() + ": " + std::strerror(error_number) +
                " (creating a temporary file in " + directory.string() + ")");
  }
  stream_ = ::fdopen(fd, "wb");
  if (!stream_) {
    const int error_number = errno;
    ::close(fd);
    ::unlink(temp_path_.c_str());
    throw Error("cannot write " + final_path_.string() + ": " + std::strerror(error_number));
  }
}

AtomicFile::~AtomicFile() {
  if (stream_) std::fclose(stream_);
  if (!committed_ && !in_place_) ::unlink(temp_path_.c_str());
}

std::FILE* AtomicFile::stream() {
  if (!stream_) throw std::logic_error("AtomicFile::stream after commit");
  return stream_;
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stream()) != bytes.size() && first_write_errno_ == 0)
    first_write_errno_ = errno != 0 ? errno : EIO;
}

void AtomicFile::write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }

void AtomicFile::fail(const std::string& what, int error_number) {
  if (stream_) {
    std::fclose(stream_);
    stream_ = nullptr;
  }
  committed_ = true;  // nothing left for the destructor to clean up
  if (in_place_) throw Error("cannot write " + final_path_.string() + ": " + what + std::strerror(error_number));
  ::unlink(temp_path_.c_str());
  throw Error("cannot write " + final_path_.string() + ": " + what + std::strerror(error_number) +
              "; the previous file, if any, is unchanged");
}

void AtomicFile::commit() {
  if (committed_ || !stream_) throw std::logic_error("AtomicFile::commit called twice");
  errno = 0;
  if (std::fflush(stream_) != 0) fail("", errno != 0 ? errno : EIO);
  if (std::ferror(stream_)) fail("", first_write_errno_ != 0 ? first_write_errno_ : EIO);
  if (!in_place_ && ::fsync(::fileno(stream_)) != 0) fail("", errno);
  const int close_status = std::fclose(stream_);
  stream_ = nullptr;
  if (close_status != 0) fail("", errno != 0 ? errno : EIO);
  if (in_place_) {
    committed_ = true;
    return;
  }
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) fail("renaming the temporary file: ", errno);
  committed_ = true;
  sync_directory(directory_of(final_path_));
}

}  // namespace attn
