#include "attn/train/train_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

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

TrainLog::TrainLog(bool quiet) : progress_(stderr_is_terminal() && !quiet), quiet_(quiet) {}

TrainLog::~TrainLog() {
  progress_.end();
  close_json();
}

void TrainLog::open_json(const std::filesystem::path& json_path) {
  close_json();
  // Read too, for its last line; a log one may write but not read is appended to as it is.
  json_fd_ = ::open(json_path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (json_fd_ < 0 && errno == EACCES) json_fd_ = ::open(json_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (json_fd_ < 0)
    throw Error("cannot write the JSON log " + json_path.string() + ": " + std::strerror(errno) +
                "; give --log-json a writable file");
  json_path_ = json_path;
  repair_last_line();
}

void TrainLog::close_json() {
  if (json_fd_ >= 0) ::close(json_fd_);
  json_fd_ = -1;
}

void TrainLog::repair_last_line() {
  struct stat status {};
  if (::fstat(json_fd_, &status) != 0 || !S_ISREG(status.st_mode) || status.st_size == 0) return;
  // The tail from the last newline on (at most a line as long as attn report reads, 1 MiB, and its newline).
  const off_t size = status.st_size, read_from = std::max<off_t>(0, size - (off_t{1} << 20) - 1);
  std::string tail(static_cast<std::size_t>(size - read_from), '\0');
  if (::pread(json_fd_, tail.data(), tail.size(), read_from) != static_cast<ssize_t>(tail.size())) return;
  if (tail.back() == '\n') return;
  const std::size_t newline = tail.rfind('\n');
  if (newline != std::string::npos) tail.erase(0, newline + 1);
  const bool whole_line_known = newline != std::string::npos || read_from == 0;
  const std::string name = json_path_.string();
  if (whole_line_known && !nlohmann::json::parse(tail, nullptr, false).is_object()) {
    // Half a record, from a write that failed or a process killed while writing: it goes, or this
    // run's first record would be written onto it and both be lost to attn report.
    if (::ftruncate(json_fd_, size - static_cast<off_t>(tail.size())) == 0) {
      message(name + ": removed its cut last line (" + std::to_string(tail.size()) +
              " bytes, left by a write that failed or a killed process)");
      return;
    }
  }
  write_line("");  // a whole record without its newline (or a line too long to judge): this run starts a new line
  message(name + ": its last line had no newline; this run's records start on a new line");
}

void TrainLog::write_json(const LogRecord& r) {
  if (json_fd_ < 0) return;
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
  if (r.split == "train") {
    j["grad_norm"] = r.grad_norm;
    j["window_updates"] = r.window_updates;
  }
  if (r.bleu) j["bleu"] = *r.bleu;
  if (r.joined)
    j["joined"] = {
        {"pairs", r.joined->pairs}, {"loss", r.joined->loss}, {"nll_loss", r.joined->nll}, {"bleu", r.joined->bleu}};
  j["peak_rss_mb"] = peak_rss_mb();
  write_line(j.dump());
}

void TrainLog::write_line(const std::string& json_text) {
  // One record a line, written at once (attn report reads the log of a live
  // run) and checked: a log that silently stays empty is a run nobody can
  // follow or report. A record the disk had no room for is cut back, so the
  // log never ends in half a line.
  const std::string line = json_text + '\n';
  struct stat status {};
  const bool regular = ::fstat(json_fd_, &status) == 0 && S_ISREG(status.st_mode);
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(json_fd_, line.data() + done, line.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int error_number = n < 0 ? errno : EIO;
    if (regular && done > 0 && ::ftruncate(json_fd_, status.st_size) != 0) {
      // The cut line stays; the next run's open_json removes it.
    }
    throw LogWriteError("cannot write the JSON log " + json_path_.string() + ": " + std::strerror(error_number));
  }
}

void TrainLog::started(const model::ModelConfig& config, std::int64_t parameters, std::int64_t update, double elapsed_s,
                       const nlohmann::json& train_flags, const std::string& changed_flags) {
  if (json_fd_ < 0) return;
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
  if (json_fd_ < 0) return;
  write_line(nlohmann::json{{"split", "end"}, {"update", update}, {"elapsed_s", elapsed_s}, {"reason", reason}}.dump());
}

std::string TrainLog::train_line(const LogRecord& r) const {
  char line[256];
  std::snprintf(line, sizeof line,
                "epoch %ld %3.0f%% | update %ld | loss %.3f | ppl %.2f | lr %.2e | gnorm %.2f | %.0f tok/s | %s",
                static_cast<long>(r.epoch), 100.0 * r.epoch_fraction, static_cast<long>(r.update), r.loss,
                std::exp(r.nll), r.lr, r.grad_norm, r.tokens_per_s, format_duration(r.elapsed_s).c_str());
  std::string text = line;
  if (r.eta_s) text += " | ETA " + format_duration(*r.eta_s);
  return text;
}

void TrainLog::train(const LogRecord& r) {
  write_json(r);
  if (quiet_) return;
  const std::string text = train_line(r);
  if (progress_.enabled()) {
    progress_.show(text);
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
  }
}

void TrainLog::progress(const LogRecord& r) {
  if (!quiet_ && progress_.enabled()) progress_.show(train_line(r));
}

void TrainLog::valid(const LogRecord& r) {
  write_json(r);
  if (quiet_) return;
  progress_.end();
  char joined[96] = "";
  if (r.joined)
    std::snprintf(joined, sizeof joined, " | joined x%ld: loss %.3f bleu %.2f", static_cast<long>(r.joined->pairs),
                  r.joined->loss, r.joined->bleu);
  std::fprintf(stderr, "valid | %s epoch %ld | update %ld | loss %.3f | ppl %.2f | bleu %.2f%s | %s\n",
               r.epoch_end ? "after" : "in", static_cast<long>(r.epoch), static_cast<long>(r.update), r.loss,
               std::exp(r.nll), r.bleu.value_or(0.0), joined, format_duration(r.elapsed_s).c_str());
  std::fflush(stderr);
}

void TrainLog::message(const std::string& text) {
  if (quiet_) return;
  progress_.end();
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace attn::train
