// attn serve against hostile clients, each case over loopback against a real
// server (serve_fixture.h) with raw sockets (raw_http.h), bounded in count and
// time: bodies however framed, headers, slow clients, work per request,
// cancellation, fairness, the Host a page names, content types, methods,
// numbers out of range, the drain. Where the server could be tied up,
// /healthz is timed meanwhile and must answer within 100 ms (p99).
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../../bench/hostile_load.h"
#include "../../bench/serve_load.h"
#include "serve_fixture.h"

using namespace attn;
using namespace attn::test;
using namespace attn::bench;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One request on a fresh connection.
std::optional<RawConnection::Answer> ask(int port, const std::string& request, double seconds = 30.0) {
  RawConnection c(port);
  if (!c.send(request)) return std::nullopt;
  return c.read_answer(seconds);
}

void require_error(const std::optional<RawConnection::Answer>& a, int status, const std::string& needle) {
  REQUIRE(a);
  INFO(a->head << a->body);
  REQUIRE(a->status == status);
  const json body = json::parse(a->body);
  REQUIRE(body["error"]["status"] == status);
  REQUIRE(body["error"]["message"].get<std::string>().find(needle) != std::string::npos);
}

int queued(int port) {
  const auto a = ask(port, http_get("/healthz"), 5.0);
  return a && a->status == 200 ? json::parse(a->body)["queued_sentences"].get<int>() : -1;
}

// A translate request long to decode on the tiny models: wide beams, outputs
// as long as the model's positions allow.
std::string heavy_translate(int sentences, int beam = 200) {
  std::vector<std::string> s(static_cast<std::size_t>(sentences), "red cat sees two dog small big");
  return json{{"model", "muse"}, {"sentences", s}, {"beam", beam}, {"max_len_a", 100}, {"max_len_b", 1000}}.dump();
}
const std::vector<std::string> kHeavyFlags{"--max-beam", "1000", "--max-work", "1000000000000"};

std::string chunked_post_head(const std::string& path) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
}

}  // namespace

TEST_CASE("serve hostile: a chunked body over --max-body is refused as it is read, and memory stays flat",
          "[serve][hostile][e2e]") {
  ServeProcess server({"--max-body", "1048576"});
  HealthProbe probe(server.port());
  const long before = resident_kb(server.child().pid());
  RawConnection c(server.port());
  REQUIRE(c.send(chunked_post_head("/v1/translate")));
  // 40 MB in 64 KB chunks; the server must stop reading long before.
  const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
  std::size_t sent = 0;
  const auto start = Clock::now();
  while (sent < (40u << 20) && c.send(chunk) && seconds_since(start) < 20) sent += 0x10000;
  const auto answer = c.read_answer(5.0);
  require_error(answer, 413, "--max-body");
  INFO("sent " << sent << " bytes before the server refused");
  REQUIRE(sent < (16u << 20));  // 1 MB read, the rest in the sockets' buffers (a few MB on loopback)
  REQUIRE(resident_kb(server.child().pid()) - before < 20 * 1024);
  probe.finish();
  REQUIRE(probe.count() > 0);
  REQUIRE(probe.quantile(0.99) <= 100.0);
}

TEST_CASE("serve hostile: 200,000 header fields or 10 MB of header are refused, not read", "[serve][hostile][e2e]") {
  ServeProcess server;
  HealthProbe probe(server.port());
  RawConnection c(server.port());
  REQUIRE(c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  std::size_t sent = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::string field = "X-Padding-" + std::to_string(i) + ": " + std::string(30, 'a') + "\r\n";
    if (!c.send(field)) break;
    sent += field.size();
  }
  INFO("sent " << sent << " bytes of header");
  REQUIRE(sent < (8u << 20));
  const auto answer = c.read_answer(5.0);
  if (answer) require_error(answer, 431, "header");  // or the connection was closed before the answer was read
  // Many small fields within the byte limit are refused by count.
  std::string many = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 200; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  require_error(ask(server.port(), many + "\r\n"), 431, "header fields");
  probe.finish();
  REQUIRE(probe.quantile(0.99) <= 100.0);
}

TEST_CASE("serve hostile: two Content-Length headers, or one beside chunked, are refused", "[serve][hostile][e2e]") {
  ServeProcess server;
  const std::string body = R"({"model": "muse", "sentences": ["red cat"]})";
  const std::string head = "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  require_error(ask(server.port(),
                    head + "Content-Length: " + std::to_string(body.size()) + "\r\nContent-Length: 5\r\n\r\n" + body),
                400, "could not be read");
  require_error(ask(server.port(), head + "Content-Length: " + std::to_string(body.size()) +
                                       "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body),
                400, "could not be read");
  const auto both = ask(server.port(), head + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + "2a\r\n" +
                                           body.substr(0, 42) + "\r\n0\r\n\r\n");
  REQUIRE(both);
  REQUIRE(both->status == 400);
}

TEST_CASE("serve hostile: pipelined requests are all answered, in order, and keep-alive lasts past 5 requests",
          "[serve][hostile][e2e]") {
  ServeProcess server;
  RawConnection c(server.port());
  const std::string translate = http_post("/v1/translate", R"({"model": "muse", "sentences": ["red cat"]})");
  REQUIRE(c.send(http_get("/healthz") + translate + http_get("/v1/models") + translate + http_get("/nothing")));
  const int expected[] = {200, 200, 200, 200, 404};
  for (int status : expected) {
    const auto a = c.read_answer(30.0);
    REQUIRE(a);
    REQUIRE(a->status == status);
  }
  for (int i = 0; i < 20; ++i) {
    REQUIRE(c.send(http_get("/healthz")));
    const auto a = c.read_answer(10.0);
    INFO("request " << i + 6 << " on one connection");
    REQUIRE(a);
    REQUIRE(a->status == 200);
  }
}

TEST_CASE("serve hostile: slow clients are cut at --read-timeout and cannot hold the server", "[serve][hostile][e2e]") {
  ServeProcess server({"--connections", "64", "--read-timeout", "1"});
  HealthProbe probe(server.port());
  // Four clients sending a byte every 200 ms (a per-read timeout would never fire) …
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 4; ++i) slow.push_back(std::make_unique<RawConnection>(server.port()));
  // … and 40 that connect and say nothing.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(std::make_unique<RawConnection>(server.port()));
  const std::string request = http_get("/healthz");
  const auto start = Clock::now();
  std::vector<bool> cut(slow.size(), false);
  for (std::size_t k = 0; k < request.size() && seconds_since(start) < 4; ++k) {
    for (std::size_t i = 0; i < slow.size(); ++i)
      if (!cut[i] && !slow[i]->send(request.substr(k, 1))) cut[i] = true;
    if (std::count(cut.begin(), cut.end(), true) == static_cast<long>(cut.size())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (std::size_t i = 0; i < slow.size(); ++i) REQUIRE((cut[i] || slow[i]->closed_within(1.0)));
  for (auto& c : idle) REQUIRE(c->closed_within(1.0));
  INFO("the slow clients were cut after " << seconds_since(start) << " s");
  REQUIRE(seconds_since(start) < 3.5);
  probe.finish();
  REQUIRE(probe.quantile(0.99) <= 100.0);
  // The server is as good as new.
  const auto fine = ask(server.port(), http_post("/v1/translate", R"({"model": "muse", "sentences": ["red cat"]})"));
  REQUIRE(fine);
  REQUIRE(fine->status == 200);
}

TEST_CASE("serve hostile: attend's model list is bounded and names each model once", "[serve][hostile][e2e]") {
  ServeProcess server;
  json names = json::array();
  for (int i = 0; i < 300; ++i) names.push_back(i % 2 ? "muse" : "csan");
  require_error(ask(server.port(), http_post("/v1/attend", json{{"sentence", "red cat"}, {"models", names}}.dump())),
                400, "each may be named once");
  require_error(ask(server.port(), http_post("/v1/attend", R"({"sentence": "red cat", "models": ["muse", "muse"]})")),
                400, "twice");
  const auto fine =
      ask(server.port(), http_post("/v1/attend", R"({"sentence": "red cat", "models": ["csan", "muse"]})"));
  REQUIRE(fine);
  REQUIRE(fine->status == 200);
  REQUIRE(json::parse(fine->body)["results"].size() == 2);
}

TEST_CASE("serve hostile: a request's work (beam × length × sentences × models) is bounded by --max-work",
          "[serve][hostile][e2e]") {
  ServeProcess server({"--max-work", "20000"});
  // Beam 16 and outputs up to 100 × the source: refused before any decoding.
  const std::string big =
      json{{"model", "muse"}, {"sentences", {"red cat sees two dog", "blue dog"}}, {"beam", 16}, {"max_len_a", 100}}
          .dump();
  require_error(ask(server.port(), http_post("/v1/translate", big)), 413, "--max-work");
  require_error(ask(server.port(),
                    http_post("/v1/attend",
                              json{{"sentence", "red cat sees two dog"}, {"beam", 16}, {"max_len_a", 100}}.dump())),
                413, "--max-work");
  REQUIRE(queued(server.port()) == 0);
  const auto fine =
      ask(server.port(), http_post("/v1/translate", R"({"model": "muse", "sentences": ["red cat"], "beam": 5})"));
  REQUIRE(fine);
  REQUIRE(fine->status == 200);
}

TEST_CASE("serve hostile: decoding stops when its client leaves or its deadline passes", "[serve][hostile][e2e]") {
  SECTION("the client leaves") {
    ServeProcess server(kHeavyFlags);
    HealthProbe probe(server.port());
    {
      RawConnection c(server.port());
      REQUIRE(c.send(http_post("/v1/translate", heavy_translate(16))));
      REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 16; }, 10.0));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }  // the client closes its connection mid-search
    const auto left = Clock::now();
    REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 0; }, 20.0));
    INFO("the decoder was free " << seconds_since(left) << " s after the client left");
    REQUIRE(seconds_since(left) < 1.5);
    probe.finish();
    REQUIRE(probe.quantile(0.99) <= 100.0);
  }
  SECTION("the deadline passes") {
    std::vector<std::string> flags = kHeavyFlags;
    flags.insert(flags.end(), {"--timeout", "0.5"});
    ServeProcess server(flags);
    const auto sent = Clock::now();
    require_error(ask(server.port(), http_post("/v1/translate", heavy_translate(16))), 503, "--timeout");
    REQUIRE(seconds_since(sent) < 1.5);
    REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 0; }, 20.0));
    REQUIRE(seconds_since(sent) < 2.5);
  }
}

TEST_CASE("serve hostile: one large request does not stall the other clients", "[serve][hostile][e2e]") {
  // One decoder: the large request's pieces alternate with the others' requests.
  std::vector<std::string> flags = kHeavyFlags;
  flags.insert(flags.end(), {"--decoders", "1", "--max-batch", "2", "--max-wait-ms", "1"});
  ServeProcess server(flags);
  auto large = std::async(std::launch::async, [&] {
    const auto sent = Clock::now();
    const auto a = ask(server.port(), http_post("/v1/translate", heavy_translate(32)), 300.0);
    return std::make_tuple(a && a->status == 200, seconds_since(sent), Clock::now());
  });
  REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 32; }, 10.0));
  double slowest = 0;
  for (int i = 0; i < 5; ++i) {
    const auto sent = Clock::now();
    const auto a =
        ask(server.port(), http_post("/v1/translate", R"({"model": "muse", "sentences": ["red cat"], "beam": 2})"));
    REQUIRE(a);
    REQUIRE(a->status == 200);
    slowest = std::max(slowest, seconds_since(sent));
  }
  const auto small_ones_done = Clock::now();
  const auto [ok, took, large_done] = large.get();
  REQUIRE(ok);
  INFO("the large request took " << took << " s, the small ones at most " << slowest << " s");
  // The small ones were answered while the large one was still being decoded
  // (on any machine: not a time limit), each in a fraction of its time.
  REQUIRE(large_done > small_ones_done);
  REQUIRE(slowest < took / 4);
}

TEST_CASE(
    "serve hostile: while others wait, a large request is decoded one small piece at a time, whatever --max-batch",
    "[serve][hostile][e2e]") {
  // One decoder, busy with a first request while a large one (16 sentences,
  // fewer than --max-batch) and a small one queue behind it: the small one
  // must not wait for all 16 — an abandoned-and-resent large request would
  // otherwise hold a decoder for whole batches.
  std::vector<std::string> flags = kHeavyFlags;
  flags.insert(flags.end(), {"--decoders", "1", "--timeout", "600"});  // slow builds (sanitizers) finish too
  ServeProcess server(flags);
  const auto timed = [&](std::string body) {
    return std::async(std::launch::async, [&server, body = std::move(body)] {
      const auto a = ask(server.port(), http_post("/v1/translate", body), 600.0);
      return std::make_pair(a && a->status == 200, Clock::now());
    });
  };
  auto first = timed(heavy_translate(4, 200));
  REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 4; }, 10.0));
  auto large = timed(heavy_translate(16, 100));
  REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 20; }, 10.0));
  auto small = timed(R"({"model": "muse", "sentences": ["red cat"], "beam": 2})");
  const auto [first_ok, first_done] = first.get();
  const auto [small_ok, small_done] = small.get();
  const auto [large_ok, large_done] = large.get();
  REQUIRE(first_ok);
  REQUIRE(small_ok);
  REQUIRE(large_ok);
  REQUIRE(small_done < large_done);
}

TEST_CASE("serve hostile: Host must name this server; JSON must say so; answers carry CSP, frame and nosniff headers",
          "[serve][hostile][e2e]") {
  ServeProcess server({"--allow-host", "attn.example"});
  const int port = server.port();
  require_error(ask(port, http_get("/v1/models", "evil.example:" + std::to_string(port))), 403, "--allow-host");
  require_error(ask(port, "GET /v1/models HTTP/1.1\r\n\r\n"), 403, "missing");
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + std::to_string(port),
                                                          "localhost:" + std::to_string(port), "attn.example"}) {
    const auto a = ask(port, http_get("/v1/models", host));
    INFO(host);
    REQUIRE(a);
    REQUIRE(a->status == 200);
  }
  // A cross-site form or a text/plain fetch cannot make the server work.
  const std::string body = R"({"model": "muse", "sentences": ["red cat"]})";
  require_error(ask(port, http_post("/v1/translate", body, "text/plain")), 415, "application/json");
  require_error(ask(port, http_post("/v1/attend", body, "application/x-www-form-urlencoded")), 415, "application/json");
  const auto ok = ask(port, http_post("/v1/translate", body, "application/json; charset=utf-8"));
  REQUIRE(ok);
  REQUIRE(ok->status == 200);
  for (const std::string path : {"/", "/healthz", "/v1/models"}) {
    const auto a = ask(port, http_get(path));
    INFO(path);
    REQUIRE(a);
    REQUIRE(a->header("X-Content-Type-Options") == "nosniff");
    REQUIRE(a->header("X-Frame-Options") == "DENY");
    REQUIRE(a->header("Content-Security-Policy").find("frame-ancestors 'none'") != std::string::npos);
  }
  REQUIRE(ask(port, http_get("/"))->header("Content-Security-Policy").find("connect-src 'self'") != std::string::npos);
}

TEST_CASE("serve hostile: /v1/models names model files without their paths unless --show-paths",
          "[serve][hostile][e2e]") {
  const ServeModels& models = serve_models();
  const std::string name = std::filesystem::path(models.muse).filename().string();
  {
    ServeProcess server;
    const auto a = ask(server.port(), http_get("/v1/models"));
    REQUIRE(a);
    REQUIRE(a->body.find(models.muse) == std::string::npos);
    REQUIRE(json::parse(a->body)["models"][0]["file"] == name);
    const auto maps = ask(server.port(), http_post("/v1/attend", R"({"sentence": "red cat", "models": ["muse"]})"));
    REQUIRE(maps);
    REQUIRE(maps->status == 200);
    REQUIRE(maps->body.find(models.muse) == std::string::npos);
  }
  ServeProcess shown({"--show-paths"});
  REQUIRE(json::parse(ask(shown.port(), http_get("/v1/models"))->body)["models"][0]["file"] == models.muse);
}

TEST_CASE("serve hostile: a method an endpoint does not take gets 405 with Allow", "[serve][hostile][e2e]") {
  ServeProcess server;
  for (const auto& [method, path, allow] :
       {std::tuple<std::string, std::string, std::string>{"PUT", "/v1/translate", "POST"},
        {"DELETE", "/v1/attend", "POST"},
        {"OPTIONS", "/v1/translate", "POST"},
        {"POST", "/v1/models", "GET, HEAD"},
        {"DELETE", "/healthz", "GET, HEAD"}}) {
    const auto a =
        ask(server.port(), method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
    INFO(method << " " << path);
    require_error(a, 405, "not allowed");
    REQUIRE(a->header("Allow") == allow);
  }
  RawConnection c(server.port());
  REQUIRE(c.send("HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const auto head = c.read_answer(10.0, true);
  REQUIRE(head);
  REQUIRE(head->status == 200);
  REQUIRE(head->body.empty());
}

TEST_CASE("serve hostile: numbers out of range are a 400 naming the field; integers as JSON Schema has them",
          "[serve][hostile][e2e]") {
  ServeProcess server({"--max-beam", "12"});
  const auto translate = [&](const std::string& fields) {
    return ask(server.port(),
               http_post("/v1/translate", R"({"model": "muse", "sentences": ["red cat"], )" + fields + "}"));
  };
  require_error(translate(R"("lenpen": 1e400)"), 400, "\"lenpen\" holds a number out of range");
  require_error(translate(R"("max_len_a": -1e400)"), 400, "\"max_len_a\"");
  require_error(translate(R"("beam": 18446744073709551615)"), 400, "\"beam\" is 18446744073709551615");
  require_error(translate(R"("beam": 99999999999999999999999)"), 400, "\"beam\" is");
  require_error(translate(R"("beam": 13)"), 400, "between 1 and 12");
  require_error(translate(R"("beam": 5.5)"), 400, "\"beam\" is 5.5");
  const auto five = translate(R"("beam": 5.0, "nbest": 2.0)");
  REQUIRE(five);
  INFO(five->body);
  REQUIRE(five->status == 200);
  REQUIRE(json::parse(five->body)["translations"][0]["nbest"].size() == 2);
  // The page's controls take the server's limits from /v1/models.
  REQUIRE(json::parse(ask(server.port(), http_get("/v1/models"))->body)["limits"]["max_beam"] == 12);
}

TEST_CASE(
    "serve hostile: the drain answers new clients 503, ends at --drain-timeout, and a second signal exits at once",
    "[serve][hostile][e2e]") {
  SECTION("drain deadline and 503 for new clients") {
    std::vector<std::string> flags = kHeavyFlags;
    flags.insert(flags.end(), {"--drain-timeout", "1"});
    ServeProcess server(flags);
    auto in_flight = std::async(std::launch::async, [&] {
      return ask(server.port(), http_post("/v1/translate", heavy_translate(16)), 60.0);
    });
    REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 16; }, 10.0));
    const auto signalled = Clock::now();
    server.child().signal(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    require_error(ask(server.port(), http_post("/v1/translate", R"({"model": "muse", "sentences": ["red"]})"), 5.0),
                  503, "shutting down");
    const auto health = ask(server.port(), http_get("/healthz"), 5.0);
    REQUIRE(health);
    REQUIRE(json::parse(health->body)["status"] == "draining");
    require_error(in_flight.get(), 503, "gave up");
    REQUIRE(server.child().wait() == 0);
    REQUIRE(seconds_since(signalled) < 4.0);
  }
  SECTION("a second signal") {
    ServeProcess server(kHeavyFlags);
    auto in_flight = std::async(std::launch::async, [&] {
      return ask(server.port(), http_post("/v1/translate", heavy_translate(16)), 60.0);
    });
    REQUIRE(server.child().wait_until([&] { return queued(server.port()) == 16; }, 10.0));
    const auto signalled = Clock::now();
    server.child().signal(SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.child().signal(SIGINT);
    REQUIRE(server.child().wait() == 128 + SIGINT);
    REQUIRE(seconds_since(signalled) < 1.0);
    in_flight.wait();
  }
}

TEST_CASE("serve hostile: every request pending at the drain deadline gets 503, never a 500 (SIGTERM or SIGHUP)",
          "[serve][hostile][nothing-lost-4][e2e]") {
  // One decoder, one sentence per batch and a beam of its own per request
  // (two sentences each): when the deadline passes one request is searched
  // and about twenty wait their turn. Each must be answered 503 (a waiting one used to reach a
  // destroyed promise whenever the decoder skipped it before its waiter
  // looked: 500 "Broken promise"), or 200 if it was answered in time.
  for (const int stop : {SIGTERM, SIGHUP}) {
    INFO("signal " << stop);
    std::vector<std::string> flags = kHeavyFlags;
    flags.insert(flags.end(), {"--drain-timeout", "1", "--decoders", "1", "--max-batch", "1"});
    ServeProcess server(flags);
    std::vector<std::future<std::optional<RawConnection::Answer>>> in_flight;
    for (int i = 0; i < 24; ++i)
      in_flight.push_back(std::async(std::launch::async, [&, i] {
        return ask(server.port(), http_post("/v1/translate", heavy_translate(2, 200 - i)), 60.0);
      }));
    REQUIRE(server.child().wait_until([&] { return queued(server.port()) >= 40; }, 10.0));
    server.child().signal(stop);
    int refused = 0;
    for (auto& pending : in_flight) {
      const auto answer = pending.get();
      REQUIRE(answer);
      if (answer->status == 200) continue;
      // Queued before the signal: "gave up"; a request still on its way when it came: "shutting down".
      const bool late = answer->body.find("shutting down") != std::string::npos;
      require_error(answer, 503, late ? "shutting down" : "gave up");
      ++refused;
    }
    REQUIRE(refused >= 4);
    REQUIRE(server.child().wait() == 0);
  }
}

TEST_CASE("serve hostile: any byte after the JSON value but whitespace is a 400, a NUL and what follows it too",
          "[serve][hostile][nothing-lost-4][e2e]") {
  ServeProcess server;
  const std::string body = R"({"model": "muse", "sentences": ["red cat"]})";
  const std::string nul(1, '\0');
  for (const std::string path : {"/v1/translate", "/v1/attend"}) {
    INFO(path);
    // nlohmann's lexer reads a NUL as the end of its input: what follows it was never looked at.
    require_error(ask(server.port(), http_post(path, body + nul + "garbage")), 400, "NUL");
    require_error(ask(server.port(), http_post(path, body + nul)), 400, "NUL");
    require_error(ask(server.port(), http_post(path, body + " " + nul + " ")), 400, "NUL");
    require_error(ask(server.port(), http_post(path, body + "x")), 400, "not valid JSON");
    require_error(ask(server.port(), http_post(path, R"({"model": "muse", "sentences": ["red)" + nul + R"(cat"]})")),
                  400, "NUL");
    const auto spaced = ask(server.port(), http_post(path, body + " \t\r\n"));
    REQUIRE(spaced);
    REQUIRE(spaced->status == 200);
  }
  // A NUL written as JSON writes it is text like any other.
  const auto escaped =
      ask(server.port(), http_post("/v1/translate", R"({"model": "muse", "sentences": ["red\u0000cat"]})"));
  REQUIRE(escaped);
  REQUIRE(escaped->status == 200);
}

TEST_CASE("serve hostile: a transfer coding other than chunked alone is 501, a content coding 415, an expectation "
          "other than 100-continue 417",
          "[serve][hostile][nothing-lost-4][e2e]") {
  ServeProcess server;
  const std::string body = R"({"model": "muse", "sentences": ["red cat"]})";
  const std::string head = "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  const auto chunked = [](const std::string& b) {
    std::ostringstream hex;
    hex << std::hex << b.size();
    return hex.str() + "\r\n" + b + "\r\n0\r\n\r\n";
  };
  const std::string length = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  // The coding is named; the connection closes after the answer, since the
  // body's end is unknown (gzip alone once had its body read as the next request).
  for (const std::string te : {"gzip, chunked", "gzip", "chunked, gzip", "deflate\r\nTransfer-Encoding: chunked"}) {
    INFO(te);
    RawConnection c(server.port());
    REQUIRE(c.send(head + "Transfer-Encoding: " + te + "\r\n\r\n" + chunked(body)));
    const auto answer = c.read_answer(10.0);
    require_error(answer, 501, "not implemented");
    REQUIRE(answer->header("Connection") == "close");
    REQUIRE(!c.read_answer(2.0));
    REQUIRE(c.closed_within(3.0));
  }
  require_error(ask(server.port(), head + "Transfer-Encoding: chunked, chunked\r\n\r\n" + chunked(chunked(body))), 400,
                "chunked 2 times");
  const auto plain = ask(server.port(), head + "Transfer-Encoding: Chunked\r\n\r\n" + chunked(body));
  REQUIRE(plain);
  REQUIRE(plain->status == 200);

  const auto coded = ask(server.port(), head + "Content-Encoding: gzip\r\n" + length);
  require_error(coded, 415, "content coding \"gzip\"");
  REQUIRE(coded->header("Accept-Encoding") == "identity");
  require_error(ask(server.port(), head + "Expect: 200-ok\r\n" + length), 417, "Expect: 100-continue");
  // 100-continue goes on as before: "100 Continue", then the answer.
  RawConnection c(server.port());
  REQUIRE(c.send(head + "Expect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n"));
  const auto go_on = c.read_answer(10.0, true);
  REQUIRE(go_on);
  REQUIRE(go_on->status == 100);
  REQUIRE(c.send(body));
  const auto answer = c.read_answer(30.0);
  REQUIRE(answer);
  REQUIRE(answer->status == 200);
}

TEST_CASE("serve hostile: every hostile client at once beside 16 ordinary ones: none of theirs fails, /healthz answers",
          "[serve][hostile][e2e]") {
  ServeProcess server({"--max-work", "20000"});
  const long before = resident_kb(server.child().pid());
  attn::bench::LoadOptions load;
  load.port = server.port();
  load.model = "muse";
  load.clients = 16;
  load.seconds = 6.0;
  HealthProbe probe(server.port());
  HostileLoad hostile(server.port(), "muse", 16);
  const attn::bench::LoadResult result = attn::bench::run_load(load, {"red cat sees two dog", "blue dog", "big dog"});
  hostile.stop();
  probe.finish();
  const long after = resident_kb(server.child().pid());
  std::printf(
      "serve hostile: %lld hostile attacks beside 16 clients: %.1f sentences/s, /healthz p99 %.1f ms, max %.1f ms, "
      "RSS %ld -> %ld kB\n",
      static_cast<long long>(hostile.rounds()), result.sentences_per_second(), probe.quantile(0.99),
      probe.quantile(1.0), before, after);
  INFO(result.first_failure);
  REQUIRE(result.failed == 0);
  REQUIRE(result.requests > 16);
  REQUIRE(hostile.rounds() > 10);
  REQUIRE(probe.quantile(0.99) <= 100.0);
  // AddressSanitizer holds freed memory in quarantine (256 MB by default) before reusing it.
  const long growth_kb = (200 + (test::under_address_sanitizer() ? 256 : 0)) * 1024;
  REQUIRE(after - before < growth_kb);
}
