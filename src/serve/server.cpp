#include "attn/serve/server.h"

#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>
#include <thread>

#include "attn/core/error.h"
#include "attn/core/stop_signals.h"
#include "attn/serve/page.h"

namespace attn::serve {

namespace {

void reply(httplib::Response& res, const Response& r) {
  res.status = r.status;
  res.set_content(r.body, "application/json");
}

// The write end of the pipe the signal handler wakes serve_until_signal with.
int stop_pipe_write = -1;
void on_stop_signal(int) {
  const char byte = 1;
  const ssize_t ignored = ::write(stop_pipe_write, &byte, 1);  // async-signal-safe
  (void)ignored;
}

}  // namespace

HttpServer::HttpServer(Api& api, Limits limits, HttpOptions options)
    : api_(api), limits_(limits), options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  const int connections = options_.max_connections;
  s.new_task_queue = [connections] { return new httplib::ThreadPool(static_cast<std::size_t>(connections)); };
  // Bodies over the limit are refused from Content-Length, before they are read.
  s.set_payload_max_length(static_cast<std::size_t>(limits_.max_body_bytes));
  s.set_read_timeout(10, 0);
  s.set_write_timeout(10, 0);
  s.set_keep_alive_timeout(5);
  // httplib listens with a backlog of 5 (compiled into Debian's library): 64
  // clients connecting at once overflowed it and some requests failed
  // (ListenOverflows in nstat). The socket is kept here and bind() listens on
  // it again with a deep backlog, which Linux allows.
  s.set_socket_options([this](int sock) {
    httplib::default_socket_options(sock);
    listen_socket_ = sock;
  });

  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(serve_page(), "text/html; charset=utf-8");
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) { reply(res, api_.health()); });
  s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) { reply(res, api_.models()); });
  s.Post("/v1/translate", [this](const httplib::Request& req, httplib::Response& res) {
    reply(res, api_.translate(req.body));
  });
  s.Post("/v1/attend", [this](const httplib::Request& req, httplib::Response& res) { reply(res, api_.attend(req.body)); });

  // Statuses httplib sets itself (404, 405, 413, 400 for a malformed request) get a JSON body too.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // the API's own error
    std::string message;
    switch (res.status) {
      case 404: message = "no such endpoint: " + req.path + "; see GET /v1/models, POST /v1/translate, POST /v1/attend"; break;
      case 405: message = req.method + " is not allowed on " + req.path + " (docs/serve.md)"; break;
      case 413:
        message = "the body is over the limit of " + std::to_string(limits_.max_body_bytes) +
                  " bytes (--max-body); send fewer sentences per request";
        break;
      default: message = "the request could not be read (HTTP " + std::to_string(res.status) + ")";
    }
    reply(res, error_response(res.status, message));
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    reply(res, error_response(500, "internal error: " + what + " (please report it)"));
  });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
  } else if (!server_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port > 0 && listen_socket_ >= 0) ::listen(listen_socket_, SOMAXCONN);
  require(port > 0, "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                        " (in use, or not an address of this machine); give another --port or --host");
  return port;
}

void HttpServer::run() { server_->listen_after_bind(); }

void HttpServer::stop() { server_->stop(); }

void serve_until_signal(HttpServer& server, const std::function<void()>& on_stop) {
  int fds[2];
  require(::pipe(fds) == 0, std::string("cannot create a pipe: ") + std::strerror(errno));
  stop_pipe_write = fds[1];
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Every stop signal drains the queue (SIGHUP too: a closed terminal).
  std::array<struct sigaction, 8> previous{};
  for (std::size_t i = 0; i < stop_signals().size(); ++i) ::sigaction(stop_signals()[i], &action, &previous[i]);
  std::thread watcher([&] {
    pollfd p{fds[0], POLLIN, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    char byte;
    if (::read(fds[0], &byte, 1) == 1 && byte == 1) {
      std::fprintf(stderr, "attn serve: stopping; answering the requests in flight\n");
      on_stop();
    }
    server.stop();
  });
  server.run();
  // run() may also end without a signal (the listener failed): wake the watcher.
  const char quit = 0;
  const ssize_t ignored = ::write(fds[1], &quit, 1);
  (void)ignored;
  watcher.join();
  for (std::size_t i = 0; i < stop_signals().size(); ++i) ::sigaction(stop_signals()[i], &previous[i], nullptr);
  ::close(fds[0]);
  ::close(fds[1]);
  stop_pipe_write = -1;
}

}  // namespace attn::serve
