// attn serve: several models behind one local HTTP server — a JSON API for
// programs and a page that puts their translations and attention maps side
// by side. The work is in serve/ (decode_queue.h, api.h, server.h); this
// file reads flags, loads the models and says where the server listens.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/model/model_file.h"
#include "attn/serve/model_spec.h"
#include "attn/serve/server.h"

namespace attn::cli {

namespace {

struct ServeFlags {
  std::vector<std::string> models;
  serve::HttpOptions http;
  serve::Limits limits;
  serve::BatchOptions batching;
  double max_wait_ms = 5.0, timeout_s = 60.0, read_timeout_s = 10.0, drain_timeout_s = 10.0;
  std::string compute_type = "fp32";
};

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

int run(ServeFlags f) {
  f.batching.max_wait = std::chrono::microseconds(static_cast<std::int64_t>(f.max_wait_ms * 1000));
  f.limits.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f.timeout_s * 1000));
  f.http.read_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f.read_timeout_s * 1000));
  f.http.drain_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f.drain_timeout_s * 1000));
  // Every argument is read before any model is loaded.
  std::vector<serve::ModelSpec> specs;
  for (const std::string& spec : f.models) specs.push_back(serve::parse_model_spec(spec));
  std::vector<serve::ServedModel> models;
  std::vector<std::string> archs;
  for (const serve::ModelSpec& spec : specs) {
    models.push_back({"", spec.file,
                      model::load_model_file(spec.file, spec.type.value_or(compute_type_for(f.compute_type)))});
    archs.push_back(models.back().loaded.model->config().arch);
  }
  const std::vector<std::string> names = serve::model_names(specs, archs);
  for (std::size_t i = 0; i < models.size(); ++i) models[i].name = names[i];

  std::vector<model::Seq2Seq*> decoders;
  for (const serve::ServedModel& m : models) decoders.push_back(m.loaded.model.get());
  serve::DecodeQueue queue(decoders, f.batching);
  serve::Api api(models, queue, f.limits);
  serve::HttpServer server(api, f.limits, f.http);
  const int port = server.bind();
  // A peer that closes its connection early must not end the server.
  std::signal(SIGPIPE, SIG_IGN);
  if (!is_loopback(f.http.host))
    std::fprintf(stderr,
                 "attn serve: listening on %s, reachable from other machines (--host %s); there is no "
                 "authentication\n",
                 f.http.host.c_str(), f.http.host.c_str());
  for (const serve::ServedModel& m : models)
    std::fprintf(stderr, "attn serve: model %s = %s (%s, %s)\n", m.name.c_str(), m.file.c_str(),
                 m.loaded.model->config().arch.c_str(),
                 std::string(model::compute_type_name(m.loaded.model->params().compute_type())).c_str());
  const std::string shown_host = f.http.host.find(':') != std::string::npos ? "[" + f.http.host + "]" : f.http.host;
  std::fprintf(stderr, "attn serve: listening on http://%s:%d/ (Ctrl-C stops)\n", shown_host.c_str(), port);
  std::fflush(stderr);
  serve::serve_until_signal(
      server, [&api] { api.close(); }, [&queue] { queue.cancel_all(); });
  std::fprintf(stderr, "attn serve: stopped\n");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<ServeFlags>();
  ServeFlags& f = *flags;
  CLI::App* sub = app.add_subcommand("serve", "Serve models over HTTP: a JSON API and a page comparing their maps");
  sub->footer("The API and its limits: docs/serve.md.\n"
              "Example:\n  attn serve -m muse=runs/muse/best.attn -m convsan=runs/convsan/best.attn --port 8080\n"
              "  then open http://127.0.0.1:8080/");
  sub->option_defaults()->group("Models and address");
  sub->add_option("-m,--model", f.models,
                  "a model file, or NAME=FILE (the name requests use; default: its arch); FILE:fp32, FILE:bf16 or "
                  "FILE:int8 loads that model in that compute type (default: --compute-type)")
      ->required();
  sub->add_option("--host", f.http.host, "address to listen on; anything but loopback is reachable from other machines")
      ->capture_default_str();
  sub->add_option("--port", f.http.port, "port (0: any free port, printed at start-up)")
      ->capture_default_str()
      ->check(bounded(within(0, 65535)));
  add_compute_type_option(*sub, f.compute_type);
  sub->option_defaults()->group("Batching");
  sub->add_option("--max-batch", f.batching.max_batch, "sentences decoded together, across requests")
      ->capture_default_str()
      ->check(bounded(within(1, 4096)));
  sub->add_option("--decoders", f.batching.decoders,
                  "batches decoded at once, each on --threads / N cores (at most --threads decoders)")
      ->capture_default_str()
      ->check(bounded(within(1, 64)));
  sub->add_option("--max-wait-ms", f.max_wait_ms, "how long a sentence waits for others to fill its batch")
      ->capture_default_str()
      ->check(bounded(within(0, 10000)));
  sub->add_option("--max-queue", f.batching.max_queued, "sentences waiting for the decoder; more are refused (429)")
      ->capture_default_str()
      ->check(bounded(within(1, 1000000)));
  sub->option_defaults()->group("Limits per request");
  sub->add_option("--max-sentences", f.limits.max_sentences, "sentences per request; more are refused (413)")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--max-input-len", f.limits.max_subwords, "subwords per sentence; longer ones are refused (413)")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--max-body", f.limits.max_body_bytes, "bytes per request body; larger ones are refused (413)")
      ->capture_default_str()
      ->check(bounded(within(1024, std::int64_t{1} << 30)));
  sub->add_option("--max-beam", f.limits.max_beam, "largest beam a request may ask for")
      ->capture_default_str()
      ->check(bounded(within(1, 1000)));
  sub->add_option("--max-work", f.limits.max_work,
                  "decoder steps a request may ask for: beam x longest output, summed over its sentences and models "
                  "(more: 413)")
      ->capture_default_str()
      ->check(bounded(within(1, std::int64_t{1} << 40)));
  sub->add_option("--timeout", f.timeout_s,
                  "seconds from a request's arrival to its answer; then its work is dropped and it gets 503")
      ->capture_default_str()
      ->check(bounded(within(0.001, 86400)));
  sub->add_option(
         "--read-timeout", f.read_timeout_s,
         "seconds a connection may take to send its next request whole (idle time included); then it is closed")
      ->capture_default_str()
      ->check(bounded(within(0.05, 3600)));
  sub->add_option("--drain-timeout", f.drain_timeout_s,
                  "seconds the requests in flight get on Ctrl-C or SIGTERM; then their work is dropped (503)")
      ->capture_default_str()
      ->check(bounded(within(0, 3600)));
  sub->option_defaults()->group("Connections and behaviour");
  sub->add_option("--connections", f.http.max_connections, "connections open at once; more get 503")
      ->capture_default_str()
      ->check(bounded(within(1, 65536)));
  sub->add_option("--workers", f.http.workers, "translate and attend requests worked on at once; more wait their turn")
      ->capture_default_str()
      ->check(bounded(within(1, 4096)));
  sub->add_option("--allow-host", f.http.allowed_hosts,
                  "a name clients reach the server by (the Host header), besides the listening address; repeatable");
  sub->add_flag(
      "--show-paths", f.limits.show_paths,
      "name the model files by their full path in /v1/models and attend's documents (default: file name only)");
  sub->add_flag("--split-sentences", f.limits.split_sentences,
                "split each line into sentences before translating (a request's \"split_sentences\" overrides)");
  sub->option_defaults()->group("Resources");
  add_common_options(*sub, common);
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
