// What `attn serve` allows one request (its --max-* flags and timeouts), read
// by the request tables (requests.h) and the API (api.h).
#pragma once
#include <chrono>
#include <cstdint>

namespace attn::serve {

struct Limits {
  std::int64_t max_body_bytes = 1 << 20;  // 413 beyond
  std::int64_t max_sentences = 64;        // per request; 413 beyond
  std::int64_t max_subwords = 250;        // per sentence; 413 beyond
  int max_beam = 16;                      // 400 beyond
  // Decoder steps a request may ask for: Σ over its sentences (and, for attend,
  // its models) of beam × the longest output allowed; 413 beyond.
  std::int64_t max_work = 100000;
  std::chrono::milliseconds timeout{60000};  // a request, from its first byte to its answer; 503 beyond
  bool split_sentences = false;              // the default of a request's "split_sentences"
  bool show_paths = false;                   // /v1/models and attend documents name model files by full path
};

}  // namespace attn::serve
