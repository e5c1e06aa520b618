#include "attn/train/train_log.h"

#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "attn/core/error.h"

namespace attn::train {

namespace {
std::string format_duration(double s) {
  if (!(s >= 0) || s > 1e8) return "?";
  const long total = static_cast<long>(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  return buf;
}
}  // namespace

TrainLog::TrainLog(const std::filesystem::path& json_path, bool quiet) : quiet_(quiet) {
  tty_ = isatty(STDERR_FILENO) != 0;
  if (!json_path.empty()) {
    json_ = std::fopen(json_path.c_str(), "a");
    if (!json_) throw Error(json_path.string() + ": cannot open the JSON log for writing");
  }
}

TrainLog::~TrainLog() {
  end_progress_line();
  if (json_) std::fclose(json_);
}

void TrainLog::end_progress_line() {
  if (progress_shown_) std::fputc('\n', stderr);
  progress_shown_ = false;
}

void TrainLog::write_json(const LogRecord& r) {
  if (!json_) return;
  nlohmann::json j = {{"split", r.split},       {"update", r.update},
                      {"epoch", r.epoch},       {"loss", r.loss},
                      {"nll_loss", r.nll},      {"ppl", std::exp(r.nll)},
                      {"lr", r.lr},             {"tokens_per_s", r.tokens_per_s},
                      {"elapsed_s", r.elapsed_s}, {"target_tokens", r.target_tokens}};
  if (r.split == "train") j["grad_norm"] = r.grad_norm;
  if (r.bleu) j["bleu"] = *r.bleu;
  std::fprintf(json_, "%s\n", j.dump().c_str());
  std::fflush(json_);
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
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    progress_shown_ = true;
  } else if (print_line) {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void TrainLog::valid(const LogRecord& r) {
  write_json(r);
  if (quiet_) return;
  end_progress_line();
  std::fprintf(stderr, "valid | epoch %ld | update %ld | loss %.3f | ppl %.2f | bleu %.2f | %s\n",
               static_cast<long>(r.epoch), static_cast<long>(r.update), r.loss, std::exp(r.nll),
               r.bleu.value_or(0.0), format_duration(r.elapsed_s).c_str());
  std::fflush(stderr);
}

void TrainLog::message(const std::string& text) {
  if (quiet_) return;
  end_progress_line();
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace attn::train
