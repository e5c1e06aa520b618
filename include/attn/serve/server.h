// `attn serve`'s HTTP side, on cpp-httplib (Debian's libcpp-httplib-dev):
// routes to the API (api.h), the page at /, JSON errors for everything else
// (404, 405, 413 for a body over the limit), a thread per connection up to
// max_connections, and a drain on stop(): the listener closes, requests in
// flight are answered, then run() returns.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "attn/serve/api.h"

namespace httplib {
class Server;
}

namespace attn::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (bind() says which)
  int max_connections = 128;  // served at once; more wait their turn
};

class HttpServer {
 public:
  HttpServer(Api& api, Limits limits, HttpOptions options);
  ~HttpServer();
  // Binds the address; returns the port. Throws Error when it cannot.
  int bind();
  // Serves until stop(); returns once every request in flight is answered.
  void run();
  // From any thread (not from a signal handler: see serve_until_signal).
  void stop();

 private:
  Api& api_;
  Limits limits_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int listen_socket_ = -1;  // the listening socket, once bound
};

// Runs `server` until SIGINT or SIGTERM, then drains it; `on_stop` runs first
// (the API refuses new work). The signals are taken over while it runs.
void serve_until_signal(HttpServer& server, const std::function<void()>& on_stop);

}  // namespace attn::serve
