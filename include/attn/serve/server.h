// `attn serve`'s HTTP side, on Boost.Beast (Debian's libboost-dev; why not
// cpp-httplib: docs/serve.md, "The HTTP layer"): one I/O thread reads and
// writes every connection without blocking, so a slow or idle client costs a
// socket, not a thread; translate and attend run on `workers` threads; the
// page, /healthz and /v1/models are answered on the I/O thread and never wait
// for the decoders.
//
// Every request is bounded before work is done for it: its header (bytes and
// count), its body however framed (Content-Length or chunked), the time to
// read it (from the end of the previous answer), its codings and
// expectations (http_codings.h: 501, 415, 417), the Host it names, its
// method (405 with Allow) and, for JSON, its Content-Type. Pipelined requests
// on a keep-alive connection are answered in order. A client that closes its
// connection while its request waits or decodes cancels it.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attn/serve/api.h"

namespace attn::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                         // 0: any free port (bind() says which)
  int max_connections = 256;               // open at once; more are answered 503 and closed
  int workers = 64;                        // translate/attend requests worked on at once; more wait
  std::vector<std::string> allowed_hosts;  // Host names accepted besides the listening address
  std::int64_t max_header_bytes = 16384;   // the request line and header; 431 beyond
  int max_headers = 64;                    // header fields; 431 beyond
  // Waiting for a request and reading it whole, from the end of the previous
  // answer; then the connection is closed.
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};         // writing one answer
  std::chrono::milliseconds connection_lifetime{600000};  // then the next answer closes it
  std::chrono::milliseconds drain_timeout{10000};         // on stop, for the requests in flight
};

class HttpServer {
 public:
  HttpServer(Api& api, Limits limits, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  // Binds the address; returns the port. Throws Error when it cannot.
  int bind();
  // Serves until drain() ends.
  void run();
  // From any thread but run()'s: every request from now on but /healthz gets
  // 503; waits up to drain_timeout for the requests in flight, then calls
  // give_up (the decoders drop their work) and waits a little more; then run()
  // returns. Returns how many requests were still in flight at the deadline.
  int drain(const std::function<void()>& give_up);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// Runs `server` until SIGINT or SIGTERM, then drains it; `on_stop` runs first
// (the API refuses new work) and `give_up` at the drain deadline. A second
// signal exits at once (status 128 + signal). The signals are taken over
// while it runs.
void serve_until_signal(HttpServer& server, const std::function<void()>& on_stop, const std::function<void()>& give_up);

}  // namespace attn::serve
