#include "attn/core/checked_stream.h"

#include <ext/stdio_sync_filebuf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "attn/core/error.h"

namespace attn {
namespace {

struct Sink {
  int fd = -1;
  int* first_errno = nullptr;
};

ssize_t write_all(void* cookie, const char* data, std::size_t size) {
  Sink& sink = *static_cast<Sink*>(cookie);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(sink.fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (*sink.first_errno == 0) *sink.first_errno = n < 0 ? errno : EIO;
      return done > 0 ? static_cast<ssize_t>(done) : -1;
    }
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

int close_sink(void* cookie) {
  const std::unique_ptr<Sink> sink(static_cast<Sink*>(cookie));
  if (sink->fd <= STDERR_FILENO) return 0;  // standard streams stay open for the shell's redirections
  if (::close(sink->fd) == 0) return 0;
  if (*sink->first_errno == 0) *sink->first_errno = errno;
  return -1;
}

int stdout_errno = 0;
bool stdout_checked = false;

}  // namespace

std::FILE* open_checked_stream(int fd, int* first_errno) {
  auto sink = std::make_unique<Sink>(Sink{fd, first_errno});
  const cookie_io_functions_t functions{nullptr, write_all, nullptr, close_sink};
  std::FILE* stream = ::fopencookie(sink.get(), "w", functions);
  if (stream) sink.release();  // owned by the stream now: close_sink frees it
  return stream;
}

void check_standard_output() {
  if (stdout_checked) return;
  std::fflush(stdout);
  // Its sink lives as long as the process: stdout is never closed, so a heap
  // sink would be left for the leak checker at exit.
  static Sink stdout_sink{STDOUT_FILENO, &stdout_errno};
  const cookie_io_functions_t functions{nullptr, write_all, nullptr, [](void*) { return 0; }};
  std::FILE* stream = ::fopencookie(&stdout_sink, "w", functions);
  if (!stream) return;
  stdout = stream;
  // std::cout (CLI11's help and version) through the same stream, in order with printf.
  static __gnu_cxx::stdio_sync_filebuf<char> cout_buffer(stream);
  static std::streambuf* const original = std::cout.rdbuf(&cout_buffer);
  // Registered after cout_buffer was built, so run before it is destroyed:
  // the runtime's last flush of std::cout must not reach a destroyed buffer.
  std::atexit([] {
    std::cout.flush();
    std::cout.rdbuf(original);
  });
  stdout_checked = true;
}

std::string standard_output_failure() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return "";
  const int reason = stdout_errno != 0 ? stdout_errno : (flush_errno != 0 ? flush_errno : EIO);
  return std::strerror(reason);
}

void require_standard_output_written(const std::string& what) {
  const std::string failure = standard_output_failure();
  if (!failure.empty()) throw Error("cannot write " + what + " to standard output: " + failure);
}

}  // namespace attn
