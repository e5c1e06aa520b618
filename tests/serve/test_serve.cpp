// attn serve over loopback with a real HTTP client: the answers
// equal what `attn translate` and `attn attend` print for the same input;
// every bad request gets a JSON error with a 4xx status and the server lives
// on; the queue's limits and timeouts answer 429 / 503; SIGTERM (or SIGHUP) lets the
// requests in flight finish and exits 0.
#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../../bench/serve_load.h"
#include "../decode/json_schema.h"
#include "../report/browser.h"
#include "serve_fixture.h"

using namespace attn;
using namespace attn::test;
using json = nlohmann::json;

namespace {

// A message against its definition in docs/serve.schema.json.
void require_schema(const std::string& definition, const json& message) {
  static const json schema =
      json::parse(slurp(std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "docs" / "serve.schema.json"));
  const test::SchemaValidator validator(json{{"$ref", "#/$defs/" + definition}, {"$defs", schema["$defs"]}});
  const auto errors = validator.validate(message);
  INFO(definition << ": " << (errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
}

httplib::Result post(httplib::Client& c, const std::string& path, const std::string& body) {
  return c.Post(path.c_str(), body, "application/json");
}

// A refusal: the status, and a JSON error whose message contains `needle`.
void require_refused(const httplib::Result& r, int status, const std::string& needle) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status == status);
  const json body = json::parse(r->body);
  require_schema("error_answer", body);
  REQUIRE(body["error"]["status"] == status);
  REQUIRE(body["error"]["message"].get<std::string>().find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("serve: translations and maps equal attn translate's and attn attend's", "[serve][e2e]") {
  // --show-paths: the documents name the model file as attn attend does.
  ServeProcess server({"--show-paths"});
  auto c = server.client();
  const ServeModels& models = serve_models();

  auto health = c->Get("/healthz");
  REQUIRE(health);
  REQUIRE(health->status == 200);
  REQUIRE(json::parse(health->body)["status"] == "ok");
  require_schema("health_answer", json::parse(health->body));

  auto listed = c->Get("/v1/models");
  REQUIRE(listed);
  REQUIRE(listed->status == 200);
  require_schema("models_answer", json::parse(listed->body));
  const json list = json::parse(listed->body)["models"];
  REQUIRE(list.size() == 2);
  REQUIRE(list[0]["name"] == "muse");
  REQUIRE(list[0]["arch"] == "muse");
  REQUIRE(list[1]["name"] == "csan");
  REQUIRE(list[1]["arch"] == "convsan2d");
  REQUIRE(list[0]["parameters"].get<std::int64_t>() > 0);
  REQUIRE(list[1]["config"]["dim"] == 16);

  const std::vector<std::string> sentences = {"red cat sees two dog", "", "blue dog", "small big cat sees red"};
  ScratchDir dir;
  std::string lines;
  for (const std::string& s : sentences) lines += s + "\n";
  const std::string input = dir.write("in.txt", lines);
  const RunResult offline = run_attn(shell_words({"translate", "-m", models.muse, "-i", input, "--beam", "3"}));
  REQUIRE(offline.status == 0);
  const json translate_request{{"model", "muse"}, {"sentences", sentences}, {"beam", 3}};
  require_schema("translate_request", translate_request);
  auto translated = post(*c, "/v1/translate", translate_request.dump());
  REQUIRE(translated);
  INFO(translated->body);
  REQUIRE(translated->status == 200);
  const json answer = json::parse(translated->body);
  require_schema("translate_answer", answer);
  REQUIRE(answer["model"] == "muse");
  std::string served;
  for (const json& t : answer["translations"]) served += t["text"].get<std::string>() + "\n";
  REQUIRE(served == offline.out);

  // split_sentences: each sentence of a line alone, joined again, as translate --split-sentences.
  const std::string paragraph = dir.write("paragraph.txt", "Red cat sits. Blue dog runs.\n");
  const RunResult split_offline =
      run_attn(shell_words({"translate", "-m", models.muse, "-i", paragraph, "--split-sentences"}));
  REQUIRE(split_offline.status == 0);
  auto split =
      post(*c, "/v1/translate",
           json{{"model", "muse"}, {"sentences", {"Red cat sits. Blue dog runs."}}, {"split_sentences", true}}.dump());
  REQUIRE(split);
  REQUIRE(split->status == 200);
  require_schema("translate_answer", json::parse(split->body));
  const json split_answer = json::parse(split->body)["translations"][0];
  REQUIRE(split_answer["text"].get<std::string>() + "\n" == split_offline.out);
  REQUIRE(split_answer["sentences"] == 2);

  auto nbest =
      post(*c, "/v1/translate", json{{"model", "csan"}, {"sentence", "red cat"}, {"beam", 4}, {"nbest", 3}}.dump());
  REQUIRE(nbest);
  REQUIRE(nbest->status == 200);
  require_schema("translate_answer", json::parse(nbest->body));
  const json hyps = json::parse(nbest->body)["translations"][0]["nbest"];
  REQUIRE(hyps.size() == 3);
  REQUIRE(hyps[0]["score"].get<double>() >= hyps[1]["score"].get<double>());

  // The attend document is the one attn attend writes (same file name, same search).
  const std::string one = dir.write("one.txt", "blue dog sees red cat\n");
  const RunResult attend = run_attn(shell_words({"attend", "-m", models.convsan2d, "-i", one, "--beam", "2"}));
  REQUIRE(attend.status == 0);
  const json attend_request{{"models", {"csan", "muse"}}, {"sentences", {"blue dog sees red cat"}}, {"beam", 2}};
  require_schema("attend_request", attend_request);
  auto maps = post(*c, "/v1/attend", attend_request.dump());
  REQUIRE(maps);
  INFO(maps->body.substr(0, 300));
  REQUIRE(maps->status == 200);
  require_schema("attend_answer", json::parse(maps->body));
  const json results = json::parse(maps->body)["results"];
  REQUIRE(results.size() == 2);
  REQUIRE(results[0]["model"] == "csan");
  REQUIRE(results[1]["model"] == "muse");
  REQUIRE(results[0]["document"] == json::parse(attend.out));
  REQUIRE(results[1]["document"]["sentences"].size() == 1);
  REQUIRE(results[1]["document"]["model"]["encoder_mixers"][0] == "muse");
  // Without "beam" the server searches as attn attend does without --beam.
  const RunResult attend_default = run_attn(shell_words({"attend", "-m", models.convsan2d, "-i", one}));
  REQUIRE(attend_default.status == 0);
  auto default_maps =
      post(*c, "/v1/attend", json{{"models", {"csan"}}, {"sentences", {"blue dog sees red cat"}}}.dump());
  REQUIRE(default_maps);
  REQUIRE(default_maps->status == 200);
  REQUIRE(json::parse(default_maps->body)["results"][0]["document"] == json::parse(attend_default.out));
}

TEST_CASE("serve: one model in int8 beside another in FP32, each answered in its own type", "[serve][int8][e2e]") {
  const ServeModels& models = serve_models();
  ServeProcess server({"--show-paths"},
                      {"q=" + models.muse + ":int8", "f=" + models.muse, "b=" + models.muse + ":bf16"});
  auto c = server.client();
  auto listed = c->Get("/v1/models");
  REQUIRE(listed);
  require_schema("models_answer", json::parse(listed->body));
  const json list = json::parse(listed->body)["models"];
  REQUIRE(list.size() == 3);
  REQUIRE(list[0]["compute_type"] == "int8");
  REQUIRE(list[1]["compute_type"] == "fp32");
  REQUIRE(list[2]["compute_type"] == "bf16");
  REQUIRE(list[0]["file"] == models.muse);  // the type is not part of the file name

  // Enough sentences that int8's rounding changes some translation of this tiny model.
  std::vector<std::string> sentences;
  const char* words[] = {"red", "blue", "cat", "dog", "sees", "big", "small", "two"};
  Rng pick(17);
  for (int i = 0; i < 60; ++i) {
    std::string sentence;
    for (int k = 0, n = 1 + static_cast<int>(pick.below(8)); k < n; ++k) {
      if (k) sentence += " ";
      sentence += words[pick.below(8)];
    }
    sentences.push_back(sentence);
  }
  ScratchDir dir;
  std::string lines;
  for (const std::string& s : sentences) lines += s + "\n";
  const std::string input = dir.write("in.txt", lines);
  std::map<std::string, std::string> offline;
  for (const std::string type : {"int8", "fp32", "bf16"}) {
    const RunResult r =
        run_attn(shell_words({"translate", "-m", models.muse, "-i", input, "--beam", "3", "--compute-type", type}));
    REQUIRE(r.status == 0);
    offline[type] = r.out;
  }
  REQUIRE(offline["int8"] != offline["fp32"]);  // the types do differ on these sentences, so the check below can fail
  for (const auto& [name, type] : {std::pair<std::string, std::string>{"q", "int8"}, {"f", "fp32"}, {"b", "bf16"}}) {
    auto translated = post(*c, "/v1/translate", json{{"model", name}, {"sentences", sentences}, {"beam", 3}}.dump());
    REQUIRE(translated);
    REQUIRE(translated->status == 200);
    const json answer = json::parse(translated->body);
    std::string served;
    for (const json& t : answer["translations"]) served += t["text"].get<std::string>() + "\n";
    INFO("model " << name << " (" << type << ")");
    REQUIRE(served == offline[type]);
  }
}

// Both endpoints take "models" (an array of names) and "sentences" (an array of
// strings); the first version's "model" and "sentence" are still read.
TEST_CASE("serve: translate and attend name models and sentences alike; the old keys still work", "[serve][e2e]") {
  ServeProcess server;
  auto c = server.client();
  const auto answer = [&](const char* path, const json& request) {
    auto r = post(*c, path, request.dump());
    REQUIRE(r);
    INFO(path << " " << request.dump() << " → " << r->body.substr(0, 300));
    REQUIRE(r->status == 200);
    return json::parse(r->body);
  };
  const json translated = answer("/v1/translate", {{"models", {"csan"}}, {"sentences", {"red cat", "blue dog"}}});
  require_schema("translate_request", json{{"models", {"csan"}}, {"sentences", {"red cat"}}});
  REQUIRE(translated["model"] == "csan");
  REQUIRE(translated["translations"].size() == 2);
  REQUIRE(answer("/v1/translate", {{"model", "csan"}, {"sentences", {"red cat", "blue dog"}}}) == translated);
  REQUIRE(answer("/v1/translate", {{"model", "csan"}, {"sentence", "red cat"}})["translations"][0] ==
          translated["translations"][0]);

  const json attended = answer("/v1/attend", {{"models", {"muse"}}, {"sentences", {"red cat"}}});
  require_schema("attend_request", json{{"models", {"muse"}}, {"sentences", {"red cat"}}});
  REQUIRE(attended["results"][0]["model"] == "muse");
  REQUIRE(answer("/v1/attend", {{"models", {"muse"}}, {"sentence", "red cat"}}) == attended);
  REQUIRE(answer("/v1/attend", {{"model", "muse"}, {"sentences", {"red cat"}}}) == attended);

  require_refused(post(*c, "/v1/translate", R"({"models": ["csan", "muse"], "sentences": ["red"]})"), 400,
                  "give an array of one");
  require_refused(post(*c, "/v1/translate", R"({"model": "csan", "models": ["csan"], "sentences": ["red"]})"), 400,
                  "not both");
  require_refused(post(*c, "/v1/attend", R"({"sentences": ["red cat", "blue dog"]})"), 400, "an array of one");
  require_refused(post(*c, "/v1/attend", R"({"sentence": "red", "sentences": ["red"]})"), 400, "not both");
}

TEST_CASE("serve: bad requests get a JSON error and a 4xx, and the server lives on", "[serve][e2e]") {
  ServeProcess server({"--max-sentences", "3", "--max-input-len", "20"});
  auto c = server.client();
  require_refused(post(*c, "/v1/translate", "{\"model\": \"muse\", \"sentences\": [\"red"), 400, "not valid JSON");
  require_refused(post(*c, "/v1/translate", "[1, 2]"), 400, "not an object");
  require_refused(post(*c, "/v1/translate", ""), 400, "no body");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": "red cat"})"), 400, "array of strings");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red", 7]})"), 400,
                  "[1] is not a string");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red"], "beam": "5"})"), 400,
                  "\"beam\"");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red"], "beam": 0})"), 400,
                  "\"beam\" is 0");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red"], "lenpen": -1})"), 400,
                  "\"lenpen\"");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red"], "beams": 4})"), 400,
                  "unknown field \"beams\"");
  require_refused(post(*c, "/v1/translate", R"({"sentences": ["red"]})"), 400, "several models are loaded");
  require_refused(post(*c, "/v1/translate", "{\"model\": \"muse\", \"sentences\": [\"r\xC3\x28\"]}"), 400, "UTF-8");
  require_refused(post(*c, "/v1/translate", R"({"model": "marian", "sentences": ["red"]})"), 404, "muse, csan");
  require_refused(post(*c, "/v1/attend", R"({"models": ["muse", "nope"], "sentence": "red"})"), 404, "nope");
  require_refused(post(*c, "/v1/attend", R"({"models": ["muse"]})"), 400, "\"sentences\"");
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["a", "b", "c", "d"]})"), 413,
                  "limit is 3");
  const std::string long_sentence(200, 'x');
  require_refused(post(*c, "/v1/translate", json{{"model", "muse"}, {"sentences", {"red", long_sentence}}}.dump()), 413,
                  "sentence 2 has");
  require_refused(post(*c, "/v1/translate", std::string(10 << 20, ' ')), 413, "over the limit");
  require_refused(c->Get("/v1/nothing"), 404, "no such endpoint");

  auto health = c->Get("/healthz");
  REQUIRE(health);
  REQUIRE(health->status == 200);
  auto fine = post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red cat"]})");
  REQUIRE(fine);
  REQUIRE(fine->status == 200);
}

TEST_CASE("serve: a sentence over --max-input-len is named as the client sent it: from 1, its length, the limit",
          "[serve][nothing-lost-4][e2e]") {
  ServeProcess server({"--max-input-len", "20"});
  auto c = server.client();
  // Each character of an unknown word is one subword (byte fallback), so the counts are known.
  const std::string x30(30, 'x');
  require_refused(post(*c, "/v1/translate", json{{"model", "muse"}, {"sentences", {"red", "blue", x30}}}.dump()), 413,
                  "sentence 3 has ");
  const auto answer = post(*c, "/v1/translate", json{{"model", "muse"}, {"sentences", {"red", x30}}}.dump());
  REQUIRE(answer);
  const std::string message = json::parse(answer->body)["error"]["message"];
  INFO(message);
  REQUIRE(message.find("sentence 2 has ") == 0);
  REQUIRE(message.find("this server takes at most 20 (--max-input-len)") != std::string::npos);
  // The count is the sentence's own (the subwords of its words), not the limit.
  const std::size_t n = std::stoul(message.substr(std::string("sentence 2 has ").size()));
  REQUIRE(n > 20);
  REQUIRE(n <= 31);
  require_refused(post(*c, "/v1/attend", json{{"models", {"csan"}}, {"sentences", {x30}}}.dump()), 413,
                  "sentence 1 has ");
  // With split_sentences, the line sent and the part of it.
  require_refused(
      post(*c, "/v1/translate",
           json{{"model", "muse"}, {"sentences", {"Red cat.", "Blue dog. Red " + x30 + "."}}, {"split_sentences", true}}
               .dump()),
      413, "sentence 2 (its part 2 as split_sentences splits it) has ");
  // Far past the limit, the count stops at ten times it.
  require_refused(post(*c, "/v1/translate", json{{"model", "muse"}, {"sentences", {std::string(5000, 'x')}}}.dump()),
                  413, "sentence 1 has more than 200 subwords");
}

TEST_CASE("serve: a full queue answers 429 and a request over its time 503", "[serve][e2e]") {
  // A lone sentence waits 3 s for company, longer than the 0.5 s a request may wait.
  ServeProcess server({"--max-queue", "2", "--max-wait-ms", "3000", "--timeout", "0.5"});
  auto first = std::async(std::launch::async, [&] {
    auto c = server.client();
    return post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red cat", "blue dog"]})");
  });
  // Wait until the first request's two sentences are queued.
  auto c = server.client();
  const bool queued = server.child().wait_until(
      [&] {
        auto h = c->Get("/healthz");
        return h && json::parse(h->body)["queued_sentences"] == 2;
      },
      10.0);
  REQUIRE(queued);
  require_refused(post(*c, "/v1/translate", R"({"model": "muse", "sentences": ["red"]})"), 429, "queue is full");
  require_refused(first.get(), 503, "--timeout");
}

TEST_CASE("serve: SIGTERM or SIGHUP (a closed terminal) answers the requests in flight, then exits 0", "[serve][e2e]") {
  for (const int stop : {SIGTERM, SIGHUP}) {
    INFO("signal " << stop);
    // Requests wait up to 1.5 s for company, so one is in flight when the signal comes.
    ServeProcess server({"--max-wait-ms", "1500"});
    auto c = server.client();
    std::atomic<bool> sent{false};
    auto in_flight = std::async(std::launch::async, [&] {
      auto own = server.client();
      sent = true;
      return post(*own, "/v1/translate", R"({"model": "csan", "sentences": ["red cat sees"]})");
    });
    REQUIRE(server.child().wait_until(
        [&] {
          auto h = c->Get("/healthz");
          return sent && h && json::parse(h->body)["queued_sentences"] == 1;
        },
        10.0));
    server.child().signal(stop);
    const httplib::Result answered = in_flight.get();
    REQUIRE(answered);
    REQUIRE(answered->status == 200);
    REQUIRE(json::parse(answered->body)["translations"].size() == 1);
    REQUIRE(server.child().wait() == 0);
    INFO(server.log());
    REQUIRE(server.log().find("attn serve: stopped") != std::string::npos);
  }
}

TEST_CASE("serve: 16 clients for 20 s, one sentence per request, every answer right", "[serve][load][e2e]") {
  ServeProcess server;
  attn::bench::LoadOptions load;
  load.port = server.port();
  load.model = "muse";
  load.clients = 16;
  load.seconds = 20.0;
  const std::vector<std::string> sentences = {"red cat sees two dog", "blue dog",          "small big cat sees red",
                                              "two red cats",         "dog sees blue cat", "big dog"};
  // Each answer must be the sentence's own translation, as attn translate gives it.
  ScratchDir dir;
  std::string lines;
  for (const std::string& s : sentences) lines += s + "\n";
  const RunResult offline =
      run_attn(shell_words({"translate", "-m", serve_models().muse, "-i", dir.write("in.txt", lines)}));
  REQUIRE(offline.status == 0);
  std::map<std::string, std::string> expected;
  std::size_t at = 0;
  for (const std::string& s : sentences) {
    const std::size_t end = offline.out.find('\n', at);
    expected[s] = offline.out.substr(at, end - at);
    at = end + 1;
  }
  load.expected = &expected;
  const attn::bench::LoadResult result = attn::bench::run_load(load, sentences);
  INFO(result.first_failure);
  REQUIRE(result.failed == 0);
  REQUIRE(result.requests > 16);
  // Reported, not asserted (machines differ): make bench compares it with attn translate.
  std::printf("serve load test: %lld requests from %d clients in %.1f s: %.1f sentences/s, p50 %.1f ms, p99 %.1f ms\n",
              static_cast<long long>(result.requests), load.clients, result.seconds, result.sentences_per_second(),
              result.latency_quantile(0.5), result.latency_quantile(0.99));
  // Every answer is in: nothing is counted as queued any more (a job leaves the
  // count before its answer is handed over), so one look tells.
  auto c = server.client();
  auto reply = c->Get("/healthz");
  REQUIRE(reply);
  const json health = json::parse(reply->body);
  REQUIRE(health["queued_sentences"] == 0);
}

TEST_CASE("serve: in headless Chromium the page translates a sentence and draws every model's maps",
          "[serve][browser][e2e]") {
  if (!std::filesystem::exists(kChromium)) ATTN_SKIP("Chromium is not installed (apt-get install chromium)");
  if (!std::filesystem::exists("/usr/bin/python3")) ATTN_SKIP("python3 is not installed");
  ServeProcess server;
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  ScratchDir dir;
  const std::string said = (dir.path() / "check.txt").string();
  const int status =
      std::system(("CHROMIUM=" + kChromium.string() + " python3 dev/serve_page_check.py --browser chromium " + url +
                   " muse csan >" + said + " 2>&1")
                      .c_str());
  INFO(slurp(said));
  REQUIRE(status == 0);
  // The page is the one the server answers at /, whole.
  auto c = server.client();
  auto page = c->Get("/");
  REQUIRE(page);
  REQUIRE(page->status == 200);
  REQUIRE(page->get_header_value("Content-Type").find("text/html") == 0);
  REQUIRE(page->body.find("attnMapsDrawer") != std::string::npos);
}

TEST_CASE("serve: in headless Firefox the page draws every model's maps too", "[serve][browser][e2e]") {
  if (!std::filesystem::exists("/usr/bin/firefox-esr"))
    ATTN_SKIP("Firefox is not installed (apt-get install firefox-esr)");
  if (!std::filesystem::exists("/usr/bin/python3")) ATTN_SKIP("python3 is not installed");
  ServeProcess server;
  ScratchDir dir;
  const std::string said = (dir.path() / "check.txt").string();
  const int status = std::system(("python3 dev/serve_page_check.py --browser firefox http://127.0.0.1:" +
                                  std::to_string(server.port()) + " muse csan >" + said + " 2>&1")
                                     .c_str());
  INFO(slurp(said));
  REQUIRE(status == 0);
}
