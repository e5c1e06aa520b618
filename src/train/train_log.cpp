#include "attn/train/train_log.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "attn/core/checked_stream.h"
#include "attn/core/cpu.h"
#include "attn/core/error.h"
#include "attn/core/threads.h"

namespace attn::train {

namespace {
// The process's peak resident set so far, in MB (ru_maxrss is in KiB on Linux); 0 if unknown.
double peak_rss_mb() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}
}  // namespace

TrainLog::TrainLog(const std::filesystem::path& json_path, bool quiet)
    : progress_(stderr_is_terminal() && !quiet), quiet_(quiet) {
  if (json_path.empty()) return;
  json_path_ = json_path;
  const int fd = ::open(json_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    throw Error("cannot write the JSON log " + json_path.string() + ": " + std::strerror(errno) +
                "; give --log-json a writable file");
  json_ = open_checked_stream(fd, &json_errno_);
  if (!json_) {
    const int error_number = errno;
    ::close(fd);
    throw Error("cannot write the JSON log " + json_path.string() + ": " + std::strerror(error_number));
  }
}

TrainLog::~TrainLog() {
  progress_.end();
  if (json_) std::fclose(json_);
}

void TrainLog::write_json(const LogRecord& r) {
  if (!json_) return;
  nlohmann::json j = {{"split", r.split},
                      {"update", r.update},
                      {"epoch", r.epoch},
                      {"loss", r.loss},
                      {"nll_loss", r.nll},
                      {"ppl", std::exp(r.nll)},
                      {"lr", r.lr},
                      {"tokens_per_s", r.tokens_per_s},
                      {"elapsed_s", r.elapsed_s},
                      {"target_tokens", r.target_tokens}};
  if (r.split == "train") j["grad_norm"] = r.grad_norm;
  if (r.bleu) j["bleu"] = *r.bleu;
  if (r.joined)
    j["joined"] = {
        {"pairs", r.joined->pairs}, {"loss", r.joined->loss}, {"nll_loss", r.joined->nll}, {"bleu", r.joined->bleu}};
  j["peak_rss_mb"] = peak_rss_mb();
  write_line(j.dump());
}

void TrainLog::write_line(const std::string& json_text) {
  std::fprintf(json_, "%s\n", json_text.c_str());
  // Each line is flushed (attn report reads the log of a live run) and checked:
  // a log that silently stays empty is a run nobody can follow or report.
  if (std::fflush(json_) == 0 && !std::ferror(json_)) return;
  const int error_number = json_errno_ != 0 ? json_errno_ : EIO;
  std::clearerr(json_);
  throw LogWriteError("cannot write the JSON log " + json_path_.string() + ": " + std::strerror(error_number));
}

void TrainLog::started(const model::ModelConfig& config, std::int64_t parameters, std::int64_t update, double elapsed_s,
                       const nlohmann::json& train_flags, const std::string& changed_flags) {
  if (!json_) return;
  nlohmann::json j = {{"split", "model"},          {"update", update},         {"elapsed_s", elapsed_s},
                      {"arch", config.arch},       {"parameters", parameters}, {"config", config.to_json()},
                      {"train_flags", train_flags}};
  if (!changed_flags.empty()) j["changed_flags"] = changed_flags;
  // A run's speed means little without the machine: each process of a resumed
  // run says where it ran (runs are often resumed on another host).
  const CpuName cpu = cpu_name();
  j["host"] = {{"cpu", {{"model_name", cpu.model}, {"family", cpu.family}, {"model", cpu.model_number}}},
               {"isa", std::string(isa_name(active_isa()))},
               {"threads", num_threads()}};
  write_line(j.dump());
}

void TrainLog::ended(std::int64_t update, double elapsed_s, const std::string& reason) {
  if (!json_) return;
  write_line(nlohmann::json{{"split", "end"}, {"update", update}, {"elapsed_s", elapsed_s}, {"reason", reason}}.dump());
}

void TrainLog::train(const LogRecord& r, bool print_line) {
  write_json(r);
  if (quiet_) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "epoch %ld %3.0f%% | update %ld | loss %.3f | ppl %.2f | lr %.2e | gnorm %.2f | %.0f tok/s | %s",
                static_cast<long>(r.epoch), 100.0 * r.epoch_fraction, static_cast<long>(r.update), r.loss,
                std::exp(r.nll), r.lr, r.grad_norm, r.tokens_per_s, format_duration(r.elapsed_s).c_str());
  std::string text = line;
  if (r.eta_s) text += " | ETA " + format_duration(*r.eta_s);
  if (progress_.enabled()) {
    progress_.show(text);
  } else if (print_line) {
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
  }
}

void TrainLog::valid(const LogRecord& r) {
  write_json(r);
  if (quiet_) return;
  progress_.end();
  char joined[96] = "";
  if (r.joined)
    std::snprintf(joined, sizeof joined, " | joined x%ld: loss %.3f bleu %.2f", static_cast<long>(r.joined->pairs),
                  r.joined->loss, r.joined->bleu);
  std::fprintf(stderr, "valid | epoch %ld | update %ld | loss %.3f | ppl %.2f | bleu %.2f%s | %s\n",
               static_cast<long>(r.epoch), static_cast<long>(r.update), r.loss, std::exp(r.nll), r.bleu.value_or(0.0),
               joined, format_duration(r.elapsed_s).c_str());
  std::fflush(stderr);
}

void TrainLog::message(const std::string& text) {
  if (quiet_) return;
  progress_.end();
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace attn::train
