// A raw HTTP/1.1 client over loopback for hostile clients (hostile_load.h,
// tests/serve/test_hostile.cpp): it sends exactly the bytes it is given
// (malformed, slow, pipelined), which a client library would not; and a probe
// that times /healthz while they run.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace attn::bench {

class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<std::uint16_t>(port));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) close();
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  bool open() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // False once the server has closed the connection.
  bool send(const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One answer: its status line, header and Content-Length body (none for an
  // answer to HEAD); nullopt when none came whole within `seconds` or the
  // connection closed first.
  struct Answer {
    int status = 0;
    std::string head, body;
    std::string header(const std::string& name) const {
      std::string lower_head = head, key = "\r\n" + name + ":";
      std::transform(lower_head.begin(), lower_head.end(), lower_head.begin(), ::tolower);
      std::transform(key.begin(), key.end(), key.begin(), ::tolower);
      const std::size_t at = lower_head.find(key);
      if (at == std::string::npos) return "";
      const std::size_t from = at + key.size(), end = head.find("\r\n", from);
      const std::string v = head.substr(from, end - from);
      return v.substr(v.find_first_not_of(' '));
    }
  };
  std::optional<Answer> read_answer(double seconds = 10.0, bool to_head = false) {
    const auto until =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    for (;;) {
      const std::size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        Answer a;
        a.head = pending_.substr(0, end + 2);
        a.status = std::atoi(a.head.c_str() + 9);
        const std::string length = a.header("Content-Length");
        const std::size_t n = length.empty() || to_head ? 0 : std::stoul(length);
        if (pending_.size() >= end + 4 + n) {
          a.body = pending_.substr(end + 4, n);
          pending_.erase(0, end + 4 + n);
          return a;
        }
      }
      if (!receive(until)) return std::nullopt;
    }
  }
  // Whether the server closes the connection within `seconds` (reading and dropping what it sends).
  bool closed_within(double seconds) {
    const auto until =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    while (receive(until)) {
    }
    return eof_;
  }

 private:
  bool receive(std::chrono::steady_clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd_ < 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string pending_;
  bool eof_ = false;
};

// A GET or a JSON POST as a browser on this machine sends it.
inline std::string http_get(const std::string& path, const std::string& host = "127.0.0.1") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
}
inline std::string http_post(const std::string& path, const std::string& body,
                             const std::string& type = "application/json", const std::string& host = "127.0.0.1") {
  return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// GET /healthz on a fresh connection every `period` while it lives; a request
// that gets no 200 counts as taking forever.
class HealthProbe {
 public:
  explicit HealthProbe(int port, std::chrono::milliseconds period = std::chrono::milliseconds(25)) {
    // At least one probe, however soon finish() comes: a short test on a busy
    // machine could otherwise end before the thread first ran, with nothing measured.
    thread_ = std::thread([this, port, period] {
      do {
        const auto sent = std::chrono::steady_clock::now();
        RawConnection c(port);
        bool ok = c.open() && c.send(http_get("/healthz"));
        const std::optional<RawConnection::Answer> a = ok ? c.read_answer(5.0) : std::nullopt;
        ok = a && a->status == 200;
        const double ms =
            ok ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count() : 1e9;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          ms_.push_back(ms);
        }
        if (!stop_) std::this_thread::sleep_for(period);
      } while (!stop_);
    });
  }
  ~HealthProbe() { finish(); }
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ms_.size();
  }
  // The q-quantile of the latencies (ms), 0 when none.
  double quantile(double q) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ms_.empty()) return 0.0;
    std::vector<double> v = ms_;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
  }

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<double> ms_;
};

}  // namespace attn::bench
