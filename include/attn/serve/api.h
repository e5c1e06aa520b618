// The JSON API of `attn serve` (docs/serve.md, schema docs/serve.schema.json),
// apart from HTTP: each endpoint takes the request body and returns a status
// and a JSON body, so the rules are tested without sockets and the server
// (server.h) only routes. Every refusal is a 4xx with
// {"error": {"status": N, "message": "what, where, what to do"}}; nothing a
// client sends can stop the server.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/model/model_file.h"
#include "attn/serve/decode_queue.h"
#include "attn/serve/limits.h"

namespace attn::serve {

struct ServedModel {
  std::string name;  // how requests name it
  std::string file;
  model::LoadedModel loaded;
};

// Who asks and until when: the HTTP side fills it in. A request whose client
// left (cancelled) or whose deadline passed stops waiting, and its decoding
// stops with it.
struct RequestContext {
  std::uint64_t client = 0;  // a connection: the decoders are shared fairly among clients
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::optional<std::chrono::steady_clock::time_point> deadline;  // default: now + Limits::timeout
};

struct Response {
  int status = 200;
  std::string body;  // JSON
};

// A JSON error body.
Response error_response(int status, const std::string& message);

class Api {
 public:
  Api(const std::vector<ServedModel>& models, DecodeQueue& queue, Limits limits);

  Response models() const;                                                          // GET /v1/models
  Response health() const;                                                          // GET /healthz
  Response translate(const std::string& body, const RequestContext& context = {});  // POST /v1/translate
  Response attend(const std::string& body, const RequestContext& context = {});     // POST /v1/attend
  // Refuses new work with 503 from now on (the server is draining).
  void close() { closed_ = true; }
  bool closed() const { return closed_; }

 private:
  const std::vector<ServedModel>& models_;
  DecodeQueue& queue_;
  Limits limits_;
  std::atomic<bool> closed_{false};
};

}  // namespace attn::serve
