// bench_length's view of the machine it runs on (its CPU's name is
// attn::cpu_name()): the memory available and the process's peak, and the CPU
// time of the whole machine against this process's own, to tell how much other
// processes ran while a part was measured; the date for the report.
#pragma once
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

namespace attn::bench::length {

using Clock = std::chrono::steady_clock;

// MemAvailable of /proc/meminfo in bytes (0 when unknown).
inline double available_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double kb = 0;
    in >> kb;
    if (key == "MemAvailable:") return kb * 1024.0;
    in.ignore(256, '\n');
  }
  return 0;
}

inline double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kB
}

// CPU time of the whole machine and of this process, to tell how much other
// processes ran while a part was measured: on a shared machine a burst of
// someone else's work can halve a number, and this catches it.
struct CpuSample {
  double busy_ticks = 0;  // all CPUs: user, nice, system, irq, softirq, steal
  double self_ticks = 0;  // this process, all its threads: user + system
  Clock::time_point at = Clock::now();
};

inline CpuSample sample_cpu() {
  CpuSample s;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  s.busy_ticks = user + nice + system + irq + softirq + steal;
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  // Fields after the ")" that ends the command name: state is field 3, utime 14, stime 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) s.self_ticks = std::atof(field.c_str());
    if (i == 15) s.self_ticks += std::atof(field.c_str());
  }
  s.at = Clock::now();
  return s;
}

// Cores' worth of CPU that other processes used between two samples.
inline double other_cores(const CpuSample& before, const CpuSample& after) {
  const double seconds = std::chrono::duration<double>(after.at - before.at).count();
  const double ticks = (after.busy_ticks - before.busy_ticks) - (after.self_ticks - before.self_ticks);
  return seconds > 0 ? std::max(0.0, ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) / seconds) : 0.0;
}

inline std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M %Z", &local);
  return buf;
}

}  // namespace attn::bench::length
