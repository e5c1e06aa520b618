// A real `attn serve` for the tests: tiny models trained once per run of the
// suite, the server started as a child process on a free loopback port (read
// from its start-up line), and an HTTP client for it.
#pragma once
#include <catch2/catch.hpp>
#include <httplib.h>

#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "../cli/child_process.h"
#include "../cli/run_attn.h"
#include "../support.h"
#include "../train/tiny_corpus.h"

namespace attn::test {

// Two tiny models (MUSE and ConvSAN 2D, a couple of updates each), trained on first use.
struct ServeModels {
  ScratchDir dir;
  std::string muse, convsan2d;
};
inline const ServeModels& serve_models() {
  static const std::unique_ptr<ServeModels> models = [] {
    auto m = std::make_unique<ServeModels>();
    write_tiny_corpus(m->dir.path(), "train", 60, 5);
    write_tiny_corpus(m->dir.path(), "valid", 8, 6);
    for (const auto& [arch, file] :
         {std::pair<std::string, std::string*>{"muse", &m->muse}, {"convsan2d", &m->convsan2d}}) {
      const RunResult r =
          run_attn(shell_words(tiny_train_args(m->dir.path(), arch, {"--arch", arch, "--max-updates", "2"})));
      INFO(r.err);
      REQUIRE(r.status == 0);
      *file = (m->dir.path() / arch / "last.attn").string();
    }
    return m;
  }();
  return *models;
}

class ServeProcess {
 public:
  // extra: flags after the -m options (limits, batching); model_specs: the
  // -m arguments (default muse=MUSE, csan=CONVSAN2D).
  explicit ServeProcess(const std::vector<std::string>& extra = {}, std::vector<std::string> model_specs = {}) {
    const ServeModels& models = serve_models();
    log_ = scratch_.path() / "serve.log";
    if (model_specs.empty()) model_specs = {"muse=" + models.muse, "csan=" + models.convsan2d};
    std::vector<std::string> args{"serve"};
    for (const std::string& spec : model_specs) args.insert(args.end(), {"-m", spec});
    args.insert(args.end(), {"--port", "0", "--threads", "1"});
    args.insert(args.end(), extra.begin(), extra.end());
    child_ = std::make_unique<ChildProcess>(args, log_);
    const std::regex listening(R"(listening on http://127\.0\.0\.1:([0-9]+)/)");
    std::smatch m;
    const bool up = child_->wait_until(
        [&] {
          const std::string text = slurp(log_);
          return std::regex_search(text, m, listening);
        },
        60.0);
    INFO(slurp(log_));
    REQUIRE(up);
    const std::string text = slurp(log_);
    REQUIRE(std::regex_search(text, m, listening));
    port_ = std::stoi(m[1].str());
  }

  int port() const { return port_; }
  std::string log() const { return slurp(log_); }
  ChildProcess& child() { return *child_; }
  // A client with generous timeouts (the suite may run beside other work).
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(60, 0);
    c->set_write_timeout(60, 0);
    c->set_connection_timeout(10, 0);
    return c;
  }

 private:
  ScratchDir scratch_;
  std::filesystem::path log_;
  std::unique_ptr<ChildProcess> child_;
  int port_ = 0;
};

}  // namespace attn::test
