// A load generator for `attn serve`: `clients` threads, each with its own
// keep-alive connection, post one request at a time to /v1/translate for
// `seconds`, cycling through `sentences` (`per_request` of them per request),
// and record each request's latency and whether it was a 200 with one
// translation per sentence (the expected one, when given). Used by the [serve] load test and bench_serve.
#pragma once
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::bench {

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string model;  // "" when one model is served
  int clients = 16;
  double seconds = 20.0;
  int per_request = 1;
  int beam = 5;
  // When set, every answer must give each sentence this translation (a check
  // that decoders running side by side do not disturb each other).
  const std::map<std::string, std::string>* expected = nullptr;
};

struct LoadResult {
  std::int64_t requests = 0, failed = 0, sentences = 0;
  double seconds = 0;
  std::vector<double> latency_ms;  // every successful request's, sorted
  std::string first_failure;

  double sentences_per_second() const { return seconds > 0 ? static_cast<double>(sentences) / seconds : 0.0; }
  double latency_quantile(double q) const {
    if (latency_ms.empty()) return 0.0;
    const auto at = static_cast<std::size_t>(q * static_cast<double>(latency_ms.size() - 1) + 0.5);
    return latency_ms[std::min(at, latency_ms.size() - 1)];
  }
};

inline LoadResult run_load(const LoadOptions& o, const std::vector<std::string>& sentences) {
  using clock = std::chrono::steady_clock;
  LoadResult result;
  std::mutex merge;
  std::atomic<std::size_t> next{0};
  const auto start = clock::now();
  const auto stop = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c)
    threads.emplace_back([&] {
      httplib::Client client(o.host, o.port);
      client.set_keep_alive(true);
      client.set_read_timeout(120, 0);
      std::vector<double> latencies;
      std::int64_t requests = 0, failed = 0, done = 0;
      std::string failure;
      while (clock::now() < stop) {
        nlohmann::json body{{"beam", o.beam}, {"sentences", nlohmann::json::array()}};
        if (!o.model.empty()) body["models"] = nlohmann::json::array({o.model});
        std::vector<std::string> asked;
        for (int k = 0; k < o.per_request; ++k) asked.push_back(sentences[next++ % sentences.size()]);
        body["sentences"] = asked;
        const auto sent = clock::now();
        const httplib::Result r = client.Post("/v1/translate", body.dump(), "application/json");
        const double ms = std::chrono::duration<double, std::milli>(clock::now() - sent).count();
        ++requests;
        bool ok = r && r->status == 200;
        if (ok) {
          const nlohmann::json answer = nlohmann::json::parse(r->body, nullptr, false);
          ok = !answer.is_discarded() && answer["translations"].size() == static_cast<std::size_t>(o.per_request);
          for (std::size_t k = 0; ok && o.expected && k < asked.size(); ++k)
            ok = answer["translations"][k]["text"] == o.expected->at(asked[k]);
        }
        if (!ok) {
          ++failed;
          if (failure.empty())
            failure = r ? "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200)
                        : "no answer (" + httplib::to_string(r.error()) + ")";
          continue;
        }
        latencies.push_back(ms);
        done += o.per_request;
      }
      std::lock_guard<std::mutex> lock(merge);
      result.requests += requests;
      result.failed += failed;
      result.sentences += done;
      result.latency_ms.insert(result.latency_ms.end(), latencies.begin(), latencies.end());
      if (result.first_failure.empty()) result.first_failure = failure;
    });
  for (std::thread& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();
  std::sort(result.latency_ms.begin(), result.latency_ms.end());
  return result;
}

}  // namespace attn::bench
