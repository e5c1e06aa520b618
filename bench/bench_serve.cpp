// attn serve under load against attn translate on the same sentences (issue
// 23): `translate` decodes the file in batches of 64 (its default); the server
// is loaded by --clients concurrent clients sending one sentence per request
// for --seconds, so its batches form across clients. Rounds alternate the two
// and the medians are compared. Run by bench/serve_bench.sh (make bench).
// With --hostile 1, each round also loads the server with the same clients
// while hostile clients run (hostile_load.h) and /healthz is timed every 25 ms:
// the ordinary clients' rate with hostile ones ÷ without, /healthz's p99 and
// the server's largest RSS (HOSTILE=1 bench/serve_bench.sh).
//
//   bench_serve --attn BIN --model MODEL --input SRC [--clients 16] [--seconds 20]
//               [--rounds 2] [--threads 2] [--beam 5] [--serve-args "--decoders 2"] [--hostile 1]
//               [--attacks chunked,headers,slow,idle,large,malformed,pipelined: a subset, to see what each costs]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "hostile_load.h"
#include "serve_load.h"

extern char** environ;

namespace {

struct Flags {
  std::string attn = "build/attn", model, input;
  std::string serve_args;  // more flags for attn serve, space-separated (e.g. "--decoders 2 --max-batch 8")
  int clients = 16, rounds = 2, threads = 2, beam = 5;
  bool hostile = false;
  std::string attacks;  // --hostile's attacks by name (hostile_load.h), all when empty
  double seconds = 20.0;
};

// The CPU seconds of the server's four busiest threads between two readings (the
// decoders, the I/O thread, a worker), largest first.
std::string busiest_threads(const std::map<long, double>& before, const std::map<long, double>& after) {
  std::vector<double> used;
  for (const auto& [tid, seconds] : after) used.push_back(seconds - (before.count(tid) ? before.at(tid) : 0.0));
  std::sort(used.rbegin(), used.rend());
  std::string text;
  double rest = 0;
  char number[32];
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (i >= 4) {
      rest += used[i];
      continue;
    }
    std::snprintf(number, sizeof number, "%s%.2f", i ? " " : "", used[i]);
    text += number;
  }
  std::snprintf(number, sizeof number, " (others %.2f)", rest);
  return text + number;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

double seconds_of(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "bench_serve: failed: %s\n", command.c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `attn serve` as a child writing to `log`; returns its pid and sets `port`.
pid_t start_server(const Flags& f, const std::filesystem::path& log, int& port) {
  std::vector<std::string> words{f.attn,       "serve",
                                 "-m",         f.model,
                                 "--port",     "0",
                                 "--threads",  std::to_string(f.threads),
                                 "--max-beam", std::to_string(f.beam)};
  std::istringstream more(f.serve_args);
  for (std::string w; more >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  if (posix_spawn(&pid, f.attn.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    std::fprintf(stderr, "bench_serve: cannot start %s\n", f.attn.c_str());
    std::exit(1);
  }
  posix_spawn_file_actions_destroy(&actions);
  const std::regex listening(R"(listening on http://127\.0\.0\.1:([0-9]+)/)");
  for (int i = 0; i < 600; ++i) {
    std::smatch m;
    const std::string text = slurp(log);
    if (std::regex_search(text, m, listening)) {
      port = std::stoi(m[1].str());
      return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "bench_serve: the server did not start:\n%s\n", slurp(log).c_str());
  ::kill(pid, SIGKILL);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--attn")
      f.attn = v;
    else if (k == "--model")
      f.model = v;
    else if (k == "--input")
      f.input = v;
    else if (k == "--clients")
      f.clients = std::stoi(v);
    else if (k == "--seconds")
      f.seconds = std::stod(v);
    else if (k == "--rounds")
      f.rounds = std::stoi(v);
    else if (k == "--threads")
      f.threads = std::stoi(v);
    else if (k == "--beam")
      f.beam = std::stoi(v);
    else if (k == "--serve-args")
      f.serve_args = v;
    else if (k == "--hostile")
      f.hostile = v == "1";
    else if (k == "--attacks")
      f.attacks = v;
    else {
      std::fprintf(stderr, "bench_serve: unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  if (f.model.empty() || f.input.empty()) {
    std::fprintf(stderr, "usage: bench_serve --attn BIN --model MODEL --input SRC [--clients N] [--seconds S]\n");
    return 2;
  }
  std::vector<std::string> sentences;
  {
    std::ifstream in(f.input);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) sentences.push_back(line);
  }
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() /
                                        ("bench_serve." + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch);
  {
    std::ofstream all(scratch / "input.txt");
    for (const std::string& s : sentences) all << s << '\n';
    std::ofstream(scratch / "empty.txt");
  }
  const std::string translate = f.attn + " translate -m '" + f.model + "' --beam " + std::to_string(f.beam) +
                                " --threads " + std::to_string(f.threads) + " -o /dev/null -i ";

  std::vector<double> offline_rate, served_rate, p50, p99, hostile_ratio, health_p99;
  long rss_max = 0;
  std::int64_t failed = 0;
  std::string failure;
  for (int r = 0; r < f.rounds; ++r) {
    // translate: the whole file, less the time to start and load the model.
    const double load = seconds_of(translate + (scratch / "empty.txt").string());
    const double whole = seconds_of(translate + (scratch / "input.txt").string());
    offline_rate.push_back(static_cast<double>(sentences.size()) / std::max(1e-3, whole - load));

    int port = 0;
    const pid_t server = start_server(f, scratch / "serve.log", port);
    attn::bench::LoadOptions load_options;
    load_options.port = port;
    load_options.clients = f.clients;
    load_options.beam = f.beam;
    load_options.seconds = 2.0;  // warm-up: pages, caches, the quantized weights of int8
    attn::bench::run_load(load_options, sentences);
    load_options.seconds = f.seconds;
    double server_cpu = attn::bench::cpu_seconds(server);
    auto threads_before = attn::bench::thread_cpu_seconds(server);
    const attn::bench::LoadResult result = attn::bench::run_load(load_options, sentences);
    const double unloaded_cpu = attn::bench::cpu_seconds(server) - server_cpu;
    const std::string unloaded_threads = busiest_threads(threads_before, attn::bench::thread_cpu_seconds(server));
    if (f.hostile) {
      std::atomic<bool> sampling{true};
      std::thread rss([&] {
        while (sampling) {
          rss_max = std::max(rss_max, attn::bench::resident_kb(server));
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      });
      attn::bench::HealthProbe probe(port);
      server_cpu = attn::bench::cpu_seconds(server);
      threads_before = attn::bench::thread_cpu_seconds(server);
      attn::bench::HostileLoad hostile(port, "", f.beam, f.attacks);
      const attn::bench::LoadResult beside = attn::bench::run_load(load_options, sentences);
      hostile.stop();
      const double loaded_cpu = attn::bench::cpu_seconds(server) - server_cpu;
      const std::string loaded_threads = busiest_threads(threads_before, attn::bench::thread_cpu_seconds(server));
      probe.finish();
      sampling = false;
      rss.join();
      hostile_ratio.push_back(beside.sentences_per_second() / std::max(1e-9, result.sentences_per_second()));
      health_p99.push_back(probe.quantile(0.99));
      failed += beside.failed;
      std::printf("round %d with hostile clients (%lld attacks): serve %.1f sent/s = %.2fx unloaded (%lld failed); "
                  "/healthz p99 %.1f ms, max %.1f ms (%zu probes); largest RSS %.1f MB\n",
                  r + 1, static_cast<long long>(hostile.rounds()), beside.sentences_per_second(), hostile_ratio.back(),
                  static_cast<long long>(beside.failed), health_p99.back(), probe.quantile(1.0), probe.count(),
                  static_cast<double>(rss_max) / 1024.0);
      // Where the cores went: the server's CPU per ordinary sentence with and
      // without the attacks, and the attackers' own (another machine's, on a real deployment).
      std::printf("  server CPU %.1f s unloaded, %.1f s with hostile clients (%.1f / %.1f ms per ordinary sentence); "
                  "the attackers' own CPU %.1f s of %.1f s x 2 cores\n",
                  unloaded_cpu, loaded_cpu, 1e3 * unloaded_cpu / std::max<double>(1, result.sentences),
                  1e3 * loaded_cpu / std::max<double>(1, beside.sentences), hostile.own_cpu_seconds(), beside.seconds);
      std::printf("  the server's busiest threads, CPU s: unloaded %s; with hostile clients %s\n",
                  unloaded_threads.c_str(), loaded_threads.c_str());
    }
    ::kill(server, SIGTERM);
    int status = 0;
    ::waitpid(server, &status, 0);
    served_rate.push_back(result.sentences_per_second());
    p50.push_back(result.latency_quantile(0.5));
    p99.push_back(result.latency_quantile(0.99));
    failed += result.failed;
    if (failure.empty()) failure = result.first_failure;
    std::printf(
        "round %d: translate %.1f sent/s; serve %.1f sent/s (%lld requests, %lld failed), p50 %.1f ms, p99 %.1f ms\n",
        r + 1, offline_rate.back(), served_rate.back(), static_cast<long long>(result.requests),
        static_cast<long long>(result.failed), p50.back(), p99.back());
    std::fflush(stdout);
  }
  std::filesystem::remove_all(scratch);
  const double offline = attn::bench::median(offline_rate), served = attn::bench::median(served_rate);
  std::printf(
      "\nattn serve %s, %d clients x 1 sentence per request, beam %d, %d threads, %zu distinct sentences, %d rounds of %.0f s\n",
      f.serve_args.c_str(), f.clients, f.beam, f.threads, sentences.size(), f.rounds, f.seconds);
  std::printf("| attn translate (batch 64) sent/s | serve sent/s | serve / translate | p50 ms | p99 ms | failed |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  std::printf("| %.1f | %.1f | %.2f | %.1f | %.1f | %lld |\n", offline, served, served / offline,
              attn::bench::median(p50), attn::bench::median(p99), static_cast<long long>(failed));
  if (f.hostile)
    std::printf("\nwith hostile clients: ordinary throughput %.2fx unloaded (median), /healthz p99 %.1f ms (median), "
                "largest RSS %.1f MB\n",
                attn::bench::median(hostile_ratio), attn::bench::median(health_p99),
                static_cast<double>(rss_max) / 1024.0);
  if (failed) std::printf("first failure: %s\n", failure.c_str());
  return failed ? 1 : 0;
}
