// What training tells the user: a live progress line on a terminal, plain log
// lines otherwise, and (with --log-json) one JSON object per log line. Each
// JSON record also carries the process's peak resident memory so far
// ("peak_rss_mb", getrusage's ru_maxrss in MB of 2^20 bytes), which
// `attn report` shows. Two more records frame each process's part of a run:
// {"split":"model", arch, parameters, config, train_flags} when it starts and
// {"split":"end", "reason": "finished" | "interrupted"} when it stops, so a
// log read without its model files still says what ran and whether it ended.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "attn/core/error.h"
#include "attn/core/progress.h"
#include "attn/model/config.h"

namespace attn::train {

struct LogRecord {
  std::string split;  // "train" | "valid"
  std::int64_t update = 0, epoch = 0;
  double loss = 0.0;  // label-smoothed, nats per target token
  double nll = 0.0;   // nats per target token; ppl = exp(nll)
  double lr = 0.0, grad_norm = 0.0, tokens_per_s = 0.0, elapsed_s = 0.0;
  double epoch_fraction = 0.0;  // of the epoch in progress
  std::optional<double> bleu;   // validation
  // Validation on the set joined `joined_pairs` sentences at a time (--join-pairs > 1).
  struct Joined {
    std::int64_t pairs = 0;
    double loss = 0.0, nll = 0.0, bleu = 0.0;
  };
  std::optional<Joined> joined;
  std::optional<double> eta_s;  // until the first stop condition
  std::int64_t target_tokens = 0;
};

// A write to the JSON log failed (a full disk, /dev/full): the trainer saves
// a checkpoint before it stops on it.
class LogWriteError : public Error {
 public:
  using Error::Error;
};

class TrainLog {
 public:
  // No JSON log until open_json.
  explicit TrainLog(bool quiet);
  ~TrainLog();
  TrainLog(const TrainLog&) = delete;
  TrainLog& operator=(const TrainLog&) = delete;
  // Opens the JSON log for appending (a resumed run appends to its log),
  // creating it. A last line cut by a failed write or a killed process is
  // repaired first, and said: a complete record gets its newline, a cut one is
  // removed, so this run's first record starts a line of its own. Every JSON
  // record is then written and flushed at once, or LogWriteError is thrown
  // with the OS's reason and the log cut back to its last whole line.
  void open_json(const std::filesystem::path& json_path);
  void close_json();
  // A training record: the progress line (terminal) or, every log_every updates, a log line.
  void train(const LogRecord& r, bool print_line);
  void valid(const LogRecord& r);
  // A plain message (ends any progress line first).
  void message(const std::string& text);
  // JSON only: the model this process trains (with its training flags, and
  // those changed since the checkpoint it resumed: train/run_flags.h), and why it stopped.
  void started(const model::ModelConfig& config, std::int64_t parameters, std::int64_t update, double elapsed_s,
               const nlohmann::json& train_flags, const std::string& changed_flags);
  void ended(std::int64_t update, double elapsed_s, const std::string& reason);

 private:
  void write_json(const LogRecord& r);
  void write_line(const std::string& json_text);
  void repair_last_line();
  StatusLine progress_;  // drawn only on a terminal
  bool quiet_ = false;
  int json_fd_ = -1;
  std::filesystem::path json_path_;
};

}  // namespace attn::train
