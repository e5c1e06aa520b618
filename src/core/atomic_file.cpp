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
#include <utility>
#include <vector>

#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/stop_signals.h"

namespace attn {
namespace {

const std::string kTempTag = ".tmp-";  // temporary names: ".<final name>.tmp-<pid>-<n>"

std::filesystem::path directory_of(const std::filesystem::path& path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// The longest file name `directory` takes (NAME_MAX, 255 on Linux's file systems).
std::size_t name_max(const std::filesystem::path& directory) {
  const long limit = ::pathconf(directory.c_str(), _PC_NAME_MAX);
  return limit > 0 ? static_cast<std::size_t>(limit) : 255;
}

// Room a temporary name needs beside the final name: "." + ".tmp-" + pid + "-" + counter.
constexpr std::size_t kTempNameRoom = 32;

// The part of the final name a temporary carries: all of it, or as much as
// leaves the temporary name within the directory's limit, so that any legal
// final name (255 bytes too) can be written.
std::string temp_stem(const std::string& final_name, std::size_t limit) {
  if (limit <= kTempNameRoom || final_name.size() + kTempNameRoom <= limit) return final_name;
  return final_name.substr(0, limit - kTempNameRoom);
}

// The temporaries of live AtomicFiles, for the signal handler: slots of
// heap-allocated paths, claimed and released atomically.
constexpr int kLiveSlots = 64;
std::atomic<char*> live_temporaries[kLiveSlots];

int remember_temporary(const std::filesystem::path& path) {
  const std::string text = path.string();
  for (int i = 0; i < kLiveSlots; ++i) {
    if (live_temporaries[i].load() != nullptr) continue;
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (!copy) return -1;
    std::memcpy(copy, text.c_str(), text.size() + 1);
    char* expected = nullptr;
    if (live_temporaries[i].compare_exchange_strong(expected, copy)) return i;
    std::free(copy);
  }
  return -1;  // more than kLiveSlots at once: still removed by the destructor and the start-up sweep
}

void forget_temporary(int slot) {
  if (slot >= 0) std::free(live_temporaries[slot].exchange(nullptr));
}

void remove_temporaries_and_end(int signal_number) {
  for (std::atomic<char*>& slot : live_temporaries)
    if (const char* path = slot.load()) ::unlink(path);  // async-signal-safe
  end_as_signal(signal_number);
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

std::filesystem::path resolve_symlinks(std::filesystem::path path) {
  std::error_code ec;
  for (int hop = 0; hop < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)); ++hop) {
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (ec) break;
    path = target.is_absolute() ? target : directory_of(path) / target;
  }
  return path;
}

bool written_in_place(const std::filesystem::path& path) {
  // Devices, FIFOs, and /dev/stdout or /proc/self/fd/N whatever they lead to
  // (a file a shell redirected to is open already: replacing it would lose the output).
  struct stat existing {};
  const std::string text = path.string();
  const bool special = text.rfind("/dev/", 0) == 0 || text.rfind("/proc/", 0) == 0;
  return (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISDIR(existing.st_mode)) ||
         (special && ::access(path.c_str(), F_OK) == 0);
}

void remove_abandoned_temporaries(const std::filesystem::path& directory, const std::string& of_file) {
  std::error_code ec;
  const std::string stem = temp_stem(of_file, name_max(directory));
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();  // ".<final name>.tmp-<pid>-<n>"
    const std::size_t tag = name.rfind(kTempTag);
    if (name.empty() || name[0] != '.' || tag == std::string::npos) continue;
    if (!of_file.empty() && name.compare(1, tag - 1, stem) != 0) continue;
    const long pid = std::strtol(name.c_str() + tag + kTempTag.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
  }
}

void remove_temporaries_on_signals() { install_stop_handler(remove_temporaries_and_end); }

AtomicFile::AtomicFile(std::filesystem::path final_path) : final_path_(std::move(final_path)) {
  if (final_path_.filename().empty())
    throw Error("cannot write '" + final_path_.string() + "': the path names a directory, not a file");
  if (written_in_place(final_path_)) {
    in_place_ = true;
    target_path_ = final_path_;
    fd_ = ::open(final_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error("cannot write " + final_path_.string() + ": " + std::strerror(errno));
    open_stream();
    return;
  }
  target_path_ = resolve_symlinks(final_path_);
  const std::filesystem::path directory = directory_of(target_path_);
  remove_abandoned_temporaries(directory, target_path_.filename().string());
  const std::string stem = temp_stem(target_path_.filename().string(), name_max(directory));
  // pid + process-wide counter make the name unique between threads and
  // processes; O_EXCL makes sure we never adopt someone else's file.
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    std::string name = ".";
    name += stem;
    name += kTempTag + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    temp_path_ = directory / name;
    // Listed for the signal handler before it exists: a signal between the
    // open and the listing would leave it behind. Unlinking a name that is not
    // there yet is harmless, and one that is (EEXIST) carries our pid, so it
    // is a leftover of a dead process that had it.
    signal_slot_ = remember_temporary(temp_path_);
    // 0666 lets the umask decide the final permissions, as for any new file.
    fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) break;
    const int error_number = errno;
    forget_temporary(std::exchange(signal_slot_, -1));
    errno = error_number;
    if (error_number != EEXIST) break;
  }
  if (fd < 0) {
    const int error_number = errno;
    if (error_number == ENOENT)
      throw Error("cannot write " + final_path_.string() + ": directory " + directory.string() +
                  " does not exist; create it first");
    throw Error("cannot write " + final_path_.string() + ": " + std::strerror(error_number) +
                " (creating a temporary file in " + directory.string() + ")");
  }
  fd_ = fd;
  // A replaced file keeps its mode and owner: replacing must not widen who can read it.
  struct stat replaced {};
  if (::stat(target_path_.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode)) {
    (void)::fchown(fd_, replaced.st_uid, replaced.st_gid);  // only root may give a file away; best effort
    if (::fchmod(fd_, replaced.st_mode & 07777) != 0) {
      const int error_number = errno;
      ::close(std::exchange(fd_, -1));
      ::unlink(temp_path_.c_str());
      forget_temporary(std::exchange(signal_slot_, -1));
      throw Error("cannot write " + final_path_.string() + ": " + std::strerror(error_number) +
                  " (keeping the permissions of the file it replaces)");
    }
  }
  open_stream();
}

void AtomicFile::open_stream() {
  stream_ = open_checked_stream(fd_, &first_write_errno_);
  if (stream_) return;
  const int error_number = errno;
  ::close(std::exchange(fd_, -1));
  if (!in_place_) ::unlink(temp_path_.c_str());
  forget_temporary(std::exchange(signal_slot_, -1));
  committed_ = true;
  throw Error("cannot write " + final_path_.string() + ": " + std::strerror(error_number));
}

AtomicFile::~AtomicFile() {
  if (stream_)
    std::fclose(stream_);
  else if (fd_ >= 0)
    ::close(fd_);
  if (!committed_ && !in_place_) ::unlink(temp_path_.c_str());
  forget_temporary(signal_slot_);
}

std::FILE* AtomicFile::stream() {
  if (!stream_) throw std::logic_error("AtomicFile::stream after commit");
  return stream_;
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  // A failure is recorded by the stream itself (core/checked_stream.h) and reported by commit().
  std::fwrite(bytes.data(), 1, bytes.size(), stream());
}

void AtomicFile::write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }

void AtomicFile::fail(const std::string& what, int error_number) {
  if (stream_) {
    std::fclose(stream_);
    stream_ = nullptr;
    fd_ = -1;
  }
  committed_ = true;  // nothing left for the destructor to clean up
  forget_temporary(std::exchange(signal_slot_, -1));
  if (in_place_) throw Error("cannot write " + final_path_.string() + ": " + what + std::strerror(error_number));
  ::unlink(temp_path_.c_str());
  throw Error("cannot write " + final_path_.string() + ": " + what + std::strerror(error_number) +
              "; the previous file, if any, is unchanged");
}

void AtomicFile::commit() {
  prepare();
  publish();
}

void commit_together(std::span<AtomicFile* const> files) {
  for (AtomicFile* file : files) file->prepare();
  // A rename can still fail after every file is complete (a target replaced
  // by a directory meanwhile): the files renamed before it then get back what
  // they held, kept meanwhile as a hard link beside their temporary.
  struct Previous {
    bool existed = false;
    std::filesystem::path kept;  // "" when nothing could be kept
  };
  std::vector<Previous> previous(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const AtomicFile& file = *files[i];
    struct stat status {};
    if (file.temp_path().empty() || ::stat(file.target_path().c_str(), &status) != 0) continue;
    previous[i].existed = true;
    const std::filesystem::path kept = file.temp_path().string() + ".old";
    ::unlink(kept.c_str());
    if (S_ISREG(status.st_mode) && ::link(file.target_path().c_str(), kept.c_str()) == 0) previous[i].kept = kept;
  }
  std::size_t published = 0;
  try {
    for (; published < files.size(); ++published) files[published]->publish();
  } catch (...) {
    for (std::size_t i = 0; i < published; ++i) {
      const AtomicFile& file = *files[i];
      if (file.temp_path().empty()) continue;  // a device: written, nothing to take back
      if (!previous[i].kept.empty())
        ::rename(previous[i].kept.c_str(), file.target_path().c_str());
      else if (!previous[i].existed)
        ::unlink(file.target_path().c_str());
    }
    for (std::size_t i = published; i < files.size(); ++i)
      if (!previous[i].kept.empty()) ::unlink(previous[i].kept.c_str());
    throw;
  }
  for (const Previous& p : previous)
    if (!p.kept.empty()) ::unlink(p.kept.c_str());
}

void AtomicFile::prepare() {
  if (committed_ || !stream_) throw std::logic_error("AtomicFile::commit called twice");
  errno = 0;
  const bool flushed = std::fflush(stream_) == 0;
  const int flush_errno = errno;
  // The stream recorded the real errno of the first failed write (ENOSPC, EFBIG…).
  if (!flushed || std::ferror(stream_))
    fail("", first_write_errno_ != 0 ? first_write_errno_ : (flush_errno != 0 ? flush_errno : EIO));
  if (!in_place_ && ::fsync(fd_) != 0) fail("", errno);
  const int close_status = std::fclose(stream_);  // closes fd_
  stream_ = nullptr;
  fd_ = -1;
  if (close_status != 0) fail("", first_write_errno_ != 0 ? first_write_errno_ : EIO);
}

void AtomicFile::publish() {
  if (committed_ || stream_) throw std::logic_error("AtomicFile::publish without prepare");
  if (!in_place_ && ::rename(temp_path_.c_str(), target_path_.c_str()) != 0)
    fail("renaming the temporary file: ", errno);
  committed_ = true;
  forget_temporary(std::exchange(signal_slot_, -1));
  if (!in_place_) sync_directory(directory_of(target_path_));
}

}  // namespace attn
