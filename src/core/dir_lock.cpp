#include "attn/core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "attn/core/error.h"

namespace attn {

namespace {

std::filesystem::path lock_path(const std::filesystem::path& directory) { return directory / "attn.lock"; }

// The pid written in an open lock file, or 0.
pid_t read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? static_cast<pid_t>(std::strtol(text, nullptr, 10)) : 0;
}

std::string in_use(const std::filesystem::path& directory, pid_t owner) {
  return directory.string() + " is in use by " +
         (owner > 0 ? "process " + std::to_string(owner) : std::string("another process")) +
         "; wait for it to finish, stop it, or use another directory";
}

}  // namespace

DirLock::DirLock(const std::filesystem::path& directory) : path_(lock_path(directory)) {
  const std::string path = path_.string();
  // The holder removes the file when it is done, so a lock taken on a file
  // that was removed (or replaced) meanwhile is no lock: take it again on the
  // file the path names now. Each retry means another process finished in
  // between, so the loop ends.
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    require(fd_ >= 0, path + ": cannot open the lock file (" + std::strerror(errno) + ")");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const pid_t owner = read_pid(fd_);
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK) throw Error(in_use(directory, owner));
      throw Error(path + ": cannot lock (" + std::strerror(err) + ")");
    }
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
    require(attempt < 100, path + ": cannot lock (the lock file keeps being replaced)");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; only the message of a second process suffers.
  }
}

DirLock::~DirLock() {
  if (fd_ < 0) return;
  // Removed while still held, so no other process can take the old file for
  // the lock (the constructor checks that the file it locked is still the
  // path's); a killed process leaves the file, and its lock dies with it.
  ::unlink(path_.c_str());
  ::close(fd_);
}

void DirLock::require_unheld(const std::filesystem::path& directory) {
  if (const std::optional<pid_t> owner = holder(directory)) throw Error(in_use(directory, *owner));
}

std::optional<pid_t> DirLock::holder(const std::filesystem::path& directory) {
  const int fd = ::open(lock_path(directory).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> owner;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    owner = read_pid(fd);
  else
    ::flock(fd, LOCK_UN);
  ::close(fd);
  return owner;
}

}  // namespace attn
