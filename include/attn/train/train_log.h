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
  // The update just done and the epoch it belongs to; a validation right
  // after an epoch's last update has epoch_end set ("after epoch N").
  std::int64_t update = 0, epoch = 0;
  bool epoch_end = false;
  // Train: means over the record's own window, the window_updates updates
  // since the previous train record (train/log_window.h); valid: over the set.
  double loss = 0.0;  // label-smoothed, nats per target token
  double nll = 0.0;   // nats per target token; ppl = exp(nll)
  std::int64_t window_updates = 0;
  double lr = 0.0, grad_norm = 0.0, tokens_per_s = 0.0, elapsed_s = 0.0;
  double epoch_fraction = 0.0;  // of `epoch`, done (train)
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
  // A train record (every --log-every updates): a JSON record, and a log
  // line (the progress line on a terminal).
  void train(const LogRecord& r);
  // The window so far, between records: the progress line on a terminal, nothing otherwise.
  void progress(const LogRecord& r);
  bool shows_progress() const { return progress_.enabled(); }
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
  std::string train_line(const LogRecord& r) const;
  void write_line(const std::string& json_text);
  void repair_last_line();
  StatusLine progress_;  // drawn only on a terminal
  bool quiet_ = false;
  int json_fd_ = -1;
  std::filesystem::path json_path_;
};

}  // namespace attn::train
