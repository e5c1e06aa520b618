// Hostile clients of `attn serve`, each a thread repeating one attack until
// the load is destroyed: chunked and header floods, slow and idle connections,
// a large request whose client leaves mid-search, attend's model list 300
// long, malformed framing, a foreign Host, text/plain, numbers out of range,
// a pipelined burst. Bounded: 7 threads, 4 slow and 40 idle connections at
// most, 4 MB per flood, 50 ms between one thread's attacks. Used by the
// [serve][hostile] test with ordinary clients beside it and by bench_serve
// --hostile, which measures what the ordinary clients keep.
#pragma once
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "raw_http.h"

namespace attn::bench {

// The CPU time (user + system, seconds) in a /proc stat file; 0 when it cannot be read.
inline double cpu_seconds_of(const std::string& stat_file) {
  std::ifstream stat(stat_file);
  std::string line;
  std::getline(stat, line);
  const auto after_name = line.rfind(')');  // the name may hold spaces
  if (after_name == std::string::npos) return 0.0;
  std::istringstream fields(line.substr(after_name + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i >= 14) ticks += std::stod(field);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}
inline double cpu_seconds(pid_t pid) { return cpu_seconds_of("/proc/" + std::to_string(pid) + "/stat"); }

// Each thread's CPU time (seconds) of a process, by thread id, from /proc.
inline std::map<long, double> thread_cpu_seconds(pid_t pid) {
  std::map<long, double> seconds;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    seconds[std::stol(task.path().filename().string())] =
        cpu_seconds_of("/proc/" + std::to_string(pid) + "/task/" + task.path().filename().string() + "/stat");
  return seconds;
}

// A process's resident memory (kB), from /proc; 0 when it cannot be read.
inline long resident_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

class HostileLoad {
 public:
  // model: a model the server loads ("" when it loads one); beam: the largest it allows.
  // only: the attacks to run, by name ("chunked,large"), "" for all of them:
  // what each costs the ordinary clients is measured by running it alone.
  HostileLoad(int port, std::string model, int beam, const std::string& only = "")
      : port_(port), model_(std::move(model)), beam_(beam) {
    const auto chosen = [&](const std::string& name) {
      return only.empty() || ("," + only + ",").find("," + name + ",") != std::string::npos;
    };
    if (chosen("chunked")) repeat([this] { chunked_flood(); });
    if (chosen("headers")) repeat([this] { header_flood(); });
    if (chosen("slow")) repeat([this] { slow_clients(); });
    if (chosen("idle")) repeat([this] { idle_clients(); });
    if (chosen("large")) repeat([this] { large_and_leave(); });
    if (chosen("malformed")) repeat([this] { malformed(); });
    if (chosen("pipelined")) repeat([this] { pipelined(); });
  }
  ~HostileLoad() { stop(); }
  HostileLoad(const HostileLoad&) = delete;
  HostileLoad& operator=(const HostileLoad&) = delete;
  void stop() {
    stop_ = true;
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }
  // Attacks completed (each answered or cut by the server).
  std::int64_t rounds() const { return rounds_; }
  // The CPU time the attacking threads took themselves (after stop()): on a real
  // deployment another machine's, here taken from the cores the server shares.
  double own_cpu_seconds() const {
    std::lock_guard<std::mutex> lock(cpu_mutex_);
    return own_cpu_seconds_;
  }

 private:
  void repeat(std::function<void()> attack) {
    threads_.emplace_back([this, attack = std::move(attack)] {
      while (!stop_) {
        attack();
        ++rounds_;
        // The attackers share the server's cores here; without a pause their
        // own CPU (floods at loopback speed) would be counted against it.
        pause(50);
      }
      rusage used{};
      getrusage(RUSAGE_THREAD, &used);
      std::lock_guard<std::mutex> lock(cpu_mutex_);
      own_cpu_seconds_ += static_cast<double>(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
                          1e-6 * static_cast<double>(used.ru_utime.tv_usec + used.ru_stime.tv_usec);
    });
  }
  void pause(int ms) {
    for (int waited = 0; waited < ms && !stop_; waited += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  void chunked_flood() {
    RawConnection c(port_);
    c.send("POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
    for (int i = 0; i < 64 && !stop_ && c.send(chunk); ++i) {
    }
    c.read_answer(2.0);
  }
  void header_flood() {
    RawConnection c(port_);
    c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const std::string fields = [] {
      std::string f;
      for (int i = 0; i < 1000; ++i) f += "X-Padding-" + std::to_string(i) + ": " + std::string(30, 'a') + "\r\n";
      return f;
    }();
    for (int i = 0; i < 100 && !stop_ && c.send(fields); ++i) {
    }
    c.read_answer(2.0);
  }
  void slow_clients() {
    std::vector<std::unique_ptr<RawConnection>> slow;
    for (int i = 0; i < 4; ++i) slow.push_back(std::make_unique<RawConnection>(port_));
    const std::string request = http_get("/healthz");
    for (std::size_t k = 0; k < request.size() && !stop_; ++k) {
      for (auto& c : slow) c->send(request.substr(k, 1));
      pause(200);
    }
  }
  void idle_clients() {
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 40; ++i) idle.push_back(std::make_unique<RawConnection>(port_));
    pause(2000);
  }
  void large_and_leave() {
    RawConnection c(port_);
    std::vector<std::string> sentences(16, "ein kleiner hund läuft über die wiese und zwei männer spielen");
    c.send(http_post("/v1/translate", with_model({{"sentences", sentences}, {"beam", beam_}}).dump()));
    pause(300);
  }
  void malformed() {
    const std::string ok_body = with_model({{"sentences", nlohmann::json::array({"ein hund"})}}).dump();
    nlohmann::json names = nlohmann::json::array();
    for (int i = 0; i < 300; ++i) names.push_back(model_.empty() ? "m" : model_);
    const std::vector<std::string> requests{
        "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 3\r\n"
        "Content-Length: 30\r\n\r\n{}",
        "PUT /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        http_get("/v1/models", "rebound.example"),
        http_post("/v1/translate", ok_body, "text/plain"),
        http_post("/v1/translate", R"({"sentences": ["ein hund"], "lenpen": 1e400})"),
        http_post("/v1/attend",
                  nlohmann::json{{"models", names}, {"sentences", nlohmann::json::array({"ein hund"})}}.dump()),
    };
    for (const std::string& r : requests) {
      if (stop_) return;
      RawConnection c(port_);
      c.send(r);
      c.read_answer(2.0);
    }
  }
  void pipelined() {
    RawConnection c(port_);
    std::string burst;
    for (int i = 0; i < 20; ++i) burst += http_get("/healthz");
    c.send(burst);
    for (int i = 0; i < 20 && c.read_answer(2.0); ++i) {
    }
    pause(50);
  }

  nlohmann::json with_model(nlohmann::json request) const {
    if (!model_.empty()) request["models"] = nlohmann::json::array({model_});
    return request;
  }

  int port_;
  std::string model_;
  int beam_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> rounds_{0};
  mutable std::mutex cpu_mutex_;
  double own_cpu_seconds_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace attn::bench
