#include "attn/serve/server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <charconv>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>

#include "attn/core/error.h"
#include "attn/core/stop_signals.h"
#include "attn/serve/http_codings.h"
#include "attn/serve/http_rules.h"
#include "attn/serve/page.h"

namespace attn::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

struct HttpServer::State {
  State(Api& a, Limits l, HttpOptions o)
      : api(a), limits(l), options(std::move(o)), hosts(options.host, options.allowed_hosts),
        workers(static_cast<std::size_t>(std::max(1, options.workers))) {}
  Api& api;
  Limits limits;
  HttpOptions options;
  HostRule hosts;
  std::atomic<int> connections{0};
  std::atomic<int> in_flight{0};  // requests read and not yet answered
  std::atomic<bool> draining{false};
  std::atomic<std::uint64_t> next_client{1};
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  net::thread_pool workers;
};

namespace {

std::string_view sv(beast::string_view v) { return {v.data(), v.size()}; }

// One connection: reads a request, answers it, reads the next (pipelined
// bytes wait in buffer_), until the client closes, a deadline passes or an
// answer says Connection: close. Every handler runs on the I/O thread.
class Connection : public std::enable_shared_from_this<Connection> {
  static constexpr std::uint64_t kSmallBody = 4096;
  static constexpr std::size_t kBodyRead = 65536;

 public:
  Connection(HttpServer::State& s, tcp::socket socket)
      : s_(s), stream_(std::move(socket)), client_(s.next_client++), opened_(Clock::now()) {
    ++s_.connections;
  }
  ~Connection() { --s_.connections; }
  void start() { read_header(); }

 private:
  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(s_.options.max_header_bytes));
    parser_->body_limit(static_cast<std::uint64_t>(s_.limits.max_body_bytes));
    // One deadline for waiting, the header and the body: a client sending a
    // byte now and then cannot keep the connection beyond it.
    stream_.expires_after(s_.options.read_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    const auto& req = parser_->get();
    head_only_ = req.method() == http::verb::head;
    // A refused request without a body leaves the connection clean for the next
    // one; one whose body's length is unknown does not.
    framing_refused_ = false;
    if (std::optional<HttpReply> refused = check(req))
      return send(std::move(*refused), !framing_refused_ && parser_->is_done() && req.keep_alive());
    if (expects_continue(field_values(req, http::field::expect))) {
      // Only now that the request is accepted does the client send its body.
      static const std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
      return net::async_write(stream_, net::buffer(go_on),
                              [self = shared_from_this()](beast::error_code e, std::size_t) {
                                if (e) return self->close();
                                self->read_body();
                              });
    }
    read_body();
  }

  void read_body() {
    // Beast reads into what the buffer already holds, at least 512 bytes, and
    // a buffer drained by the parser never grows: a 1 MB body took ~2,000
    // reads of 512 bytes, each a system call (the I/O thread's time under a
    // chunked flood). A body that may be large gets room for 64 KB reads.
    if (parser_->chunked() || parser_->content_length().value_or(0) > kSmallBody) buffer_.reserve(kBodyRead);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_read_error(beast::error_code ec) {
    if (ec == http::error::header_limit)
      return send(error_reply(431, "the request's header is over " + std::to_string(s_.options.max_header_bytes) +
                                       " bytes; send a shorter one"),
                  false);
    if (ec == http::error::body_limit)
      return send(error_reply(413, "the body is over the limit of " + std::to_string(s_.limits.max_body_bytes) +
                                       " bytes (--max-body); send fewer sentences per request"),
                  false);
    // The client left, was idle or too slow (the socket is closed with the deadline).
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset || !stream_.socket().is_open())
      return close();
    // Malformed: two Content-Lengths, a bad chunk, a bad request line…
    send(error_reply(400, "the request could not be read: " + ec.message()), false);
  }

  // What can be refused from the header alone, before the body is read.
  std::optional<HttpReply> check(const http::request<http::string_body>& req) {
    const int fields = static_cast<int>(std::distance(req.begin(), req.end()));
    if (fields > s_.options.max_headers)
      return error_reply(431, "the request has " + std::to_string(fields) + " header fields; at most " +
                                  std::to_string(s_.options.max_headers) + " are read");
    // Beast takes repeated equal lengths, as RFC 9110 allows; a proxy in front
    // may not read them alike, so only one is taken.
    if (req.count(http::field::content_length) > 1)
      return error_reply(400, "the request could not be read: it has " +
                                  std::to_string(req.count(http::field::content_length)) +
                                  " Content-Length headers; send one");
    // A transfer coding Beast does not decode (gzip, chunked) would be
    // ignored, or the body taken for the next request (gzip alone).
    if (std::optional<HttpReply> r =
            transfer_coding_refusal(field_values(req, http::field::transfer_encoding), req.version() < 11)) {
      framing_refused_ = true;
      return r;
    }
    const auto host = req.find(http::field::host);
    if (host == req.end() || !s_.hosts.accepts(sv(host->value())))
      return error_reply(403,
                         "the Host header " +
                             std::string(host == req.end() ? "is missing"
                                                           : "names " + std::string(host->value().substr(0, 200))) +
                             ", not this server's address; give the name clients use with --allow-host");
    const std::optional<Route> route = route_of(sv(req.target()));
    if (!route)
      return error_reply(404, "no such endpoint: " + std::string(req.target().substr(0, 200)) +
                                  "; see GET /v1/models, POST /v1/translate, POST /v1/attend");
    if (!method_allowed(*route, sv(req.method_string()))) {
      HttpReply r = error_reply(405, std::string(req.method_string().substr(0, 20)) + " is not allowed on " +
                                         std::string(req.target().substr(0, 200)) + "; it takes " +
                                         allowed_methods(*route) + " (docs/serve.md)");
      r.headers.emplace_back("Allow", allowed_methods(*route));
      return r;
    }
    if (std::optional<HttpReply> r = expectation_refusal(field_values(req, http::field::expect))) return r;
    if (s_.draining && *route != Route::health)
      return error_reply(503, "the server is shutting down; retry on another instance");
    if ((*route == Route::translate || *route == Route::attend) && !is_json_type(sv(req[http::field::content_type])))
      return error_reply(415, "the body must be JSON sent as Content-Type: application/json, not \"" +
                                  std::string(req[http::field::content_type].substr(0, 100)) + "\"");
    if (*route == Route::translate || *route == Route::attend)
      if (std::optional<HttpReply> r = content_coding_refusal(field_values(req, http::field::content_encoding)))
        return r;
    return std::nullopt;
  }

  // Every field of a name, as sent.
  static std::vector<std::string_view> field_values(const http::request<http::string_body>& req, http::field name) {
    std::vector<std::string_view> out;
    for (auto [it, end] = req.equal_range(name); it != end; ++it) out.push_back(sv(it->value()));
    return out;
  }

  void on_request(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    stream_.expires_never();
    if (buffer_.capacity() > kSmallBody) buffer_.shrink_to_fit();  // an idle connection keeps only what is pipelined
    http::request<http::string_body> req = parser_->release();
    const Route route = *route_of(sv(req.target()));
    keep_alive_ = req.keep_alive();
    switch (route) {
      case Route::page: return send({200, "text/html; charset=utf-8", serve_page(), {}}, keep_alive_);
      case Route::health: return send(json_reply(s_.api.health()), keep_alive_);
      case Route::models: return send(json_reply(s_.api.models()), keep_alive_);
      case Route::translate:
      case Route::attend: break;
    }
    // The decoders' work runs on a worker; this thread goes on serving others.
    ++s_.in_flight;
    counted_ = true;
    RequestContext context;
    context.client = client_;
    context.deadline = Clock::now() + s_.limits.timeout;
    cancelled_ = context.cancelled;
    watch_for_leaving();
    net::post(s_.workers, [self = shared_from_this(), route, body = std::move(req.body()), context] {
      Response r = route == Route::translate ? self->s_.api.translate(body, context)
                                             : self->s_.api.attend(body, context);
      net::post(self->stream_.get_executor(), [self, r = std::move(r)] {
        self->watching_ = false;
        beast::error_code ignored;
        self->stream_.socket().cancel(ignored);  // the watch below
        self->send(json_reply(r), self->keep_alive_);
      });
    });
  }

  // A client that closes its connection while its request is worked on
  // cancels the request. Bytes of a pipelined request end the watch (the
  // client is still there); so does an answer.
  void watch_for_leaving() {
    if (buffer_.size() > 0) return;  // a pipelined request is already here
    watching_ = true;
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (!self->watching_ || ec == net::error::operation_aborted) return;
      char byte;
      const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (ec || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) self->cancelled_->store(true);
    });
  }

  static HttpReply json_reply(const Response& r) { return {r.status, "application/json", r.body, {}}; }

  void send(HttpReply reply, bool keep_alive) {
    if (s_.draining || Clock::now() - opened_ > s_.options.connection_lifetime) keep_alive = false;
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "attn");
    res->set(http::field::content_type, reply.content_type);
    for (const auto& [k, v] : security_headers(reply.content_type.rfind("text/html", 0) == 0)) res->set(k, v);
    for (const auto& [k, v] : reply.headers) res->set(k, v);
    res->keep_alive(keep_alive);
    res->content_length(reply.body.size());
    if (!head_only_) res->body() = std::move(reply.body);
    head_only_ = false;
    stream_.expires_after(s_.options.write_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
      if (self->counted_) {
        self->counted_ = false;
        --self->s_.in_flight;
      }
      if (ec) return self->close();
      if (!keep_alive) return self->linger();
      self->read_header();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  // After a refusal the client may still be sending the body it was refused
  // for: closing at once would reset the connection and lose the answer. So
  // for a second what it sends is read and dropped: the rest of a declared
  // Content-Length up to 16 MB (a plain client sending a large body then
  // reads its 413), else 64 KB (a chunked flood is not read on).
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(1));
    std::uint64_t budget = 64 << 10;
    if (parser_) {
      // The fields read so far, even when the header ended in an error (a length over --max-body).
      const auto length = parser_->get()[http::field::content_length];
      std::uint64_t declared = 0;
      if (std::from_chars(length.data(), length.data() + length.size(), declared).ec == std::errc() && declared > 0)
        budget = std::min<std::uint64_t>(declared, 16 << 20);
    }
    buffer_.clear();
    drop_more(budget);
  }
  void drop_more(std::uint64_t budget) {
    stream_.async_read_some(buffer_.prepare(kBodyRead),
                            [self = shared_from_this(), budget](beast::error_code ec, std::size_t n) {
                              if (ec || n >= budget) return self->stream_.close();
                              self->drop_more(budget - n);
                            });
  }

  HttpServer::State& s_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const std::uint64_t client_;
  const Clock::time_point opened_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool head_only_ = false, keep_alive_ = true, counted_ = false, watching_ = false;
  bool framing_refused_ = false;  // the refused request's body cannot be told from the next request
};

void accept_next(HttpServer::State& s) {
  s.acceptor.async_accept(s.io, [&s](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !s.acceptor.is_open()) return;
    if (!ec) {
      if (s.connections >= s.options.max_connections) {
        // Over the limit: a short answer rather than a connection left waiting.
        const std::string body = error_response(503, "too many connections (--connections " +
                                                         std::to_string(s.options.max_connections) + "); retry later")
                                     .body;
        const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                   "Connection: close\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body;
        beast::error_code ignored;
        socket.non_blocking(true, ignored);
        net::write(socket, net::buffer(answer), ignored);
        socket.close(ignored);
      } else {
        std::make_shared<Connection>(s, std::move(socket))->start();
      }
    }
    accept_next(s);
  });
}

}  // namespace

HttpServer::HttpServer(Api& api, Limits limits, HttpOptions options)
    : state_(std::make_unique<State>(api, limits, std::move(options))) {}

HttpServer::~HttpServer() {
  state_->io.stop();
  state_->workers.join();
}

int HttpServer::bind() {
  State& s = *state_;
  beast::error_code ec;
  const net::ip::address address =
      net::ip::make_address(s.options.host == "localhost" ? "127.0.0.1" : s.options.host, ec);
  if (!ec) {
    const tcp::endpoint at(address, static_cast<unsigned short>(s.options.port));
    s.acceptor.open(at.protocol(), ec);
    if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) s.acceptor.bind(at, ec);
    // A deep backlog: 64 clients connecting at once overflowed a backlog of 5.
    if (!ec) s.acceptor.listen(SOMAXCONN, ec);
  }
  require(!ec, "cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) + " (" + ec.message() +
                   "); give another --port or --host");
  return s.acceptor.local_endpoint().port();
}

void HttpServer::run() {
  accept_next(*state_);
  state_->io.run();
}

int HttpServer::drain(const std::function<void()>& give_up) {
  State& s = *state_;
  s.draining = true;
  const auto wait_until = [&](Clock::time_point end) {
    while (s.in_flight > 0 && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  wait_until(Clock::now() + s.options.drain_timeout);
  const int left = s.in_flight;
  if (left > 0) {
    give_up();
    // The requests given up on are answered 503 as their searches stop.
    wait_until(Clock::now() + std::chrono::seconds(2));
  }
  net::post(s.io, [&s] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
    s.io.stop();
  });
  return left;
}

namespace {

// The write end of the pipe the signal handler wakes serve_until_signal with.
int stop_pipe_write = -1;
std::atomic<int> signals_seen{0};  // lock-free, so async-signal-safe
void on_stop_signal(int sig) {
  // The second signal: the user does not want to wait for the drain.
  if (signals_seen.fetch_add(1) > 0) ::_exit(128 + sig);
  const char byte = 1;
  const ssize_t ignored = ::write(stop_pipe_write, &byte, 1);  // async-signal-safe
  (void)ignored;
}

}  // namespace

void serve_until_signal(HttpServer& server, const std::function<void()>& on_stop,
                        const std::function<void()>& give_up) {
  int fds[2];
  require(::pipe(fds) == 0, std::string("cannot create a pipe: ") + std::strerror(errno));
  stop_pipe_write = fds[1];
  signals_seen = 0;
  // Every stop signal drains the queue (SIGHUP too: a closed terminal).
  std::optional<StopSignalScope> handlers(std::in_place, on_stop_signal);
  std::thread watcher([&] {
    pollfd p{fds[0], POLLIN, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    char byte;
    if (::read(fds[0], &byte, 1) == 1 && byte == 1) {
      std::fprintf(stderr, "attn serve: stopping; answering the requests in flight (a second Ctrl-C exits now)\n");
      on_stop();
      const int left = server.drain(give_up);
      if (left > 0) std::fprintf(stderr, "attn serve: gave up on %d requests at the drain deadline\n", left);
    }
  });
  server.run();
  // run() may also end without a signal: wake the watcher.
  const char quit = 0;
  const ssize_t ignored = ::write(fds[1], &quit, 1);
  (void)ignored;
  watcher.join();
  handlers.reset();  // before the pipe it writes to is closed
  ::close(fds[0]);
  ::close(fds[1]);
  stop_pipe_write = -1;
}

}  // namespace attn::serve
