// What `attn report` knows about a run directory in the run layout of
// docs/report.md, every file written by attn itself: its JSON log (RUN/log.jsonl,
// written by `attn train --save-dir RUN`), its arch and size (the log's "model"
// record, else best.attn, else last.attn), its peak memory (the log's
// "peak_rss_mb") and its test scores (RUN/score/<set>.<model>.json, written by
// `attn score --format json`). Nothing else in RUN is read.
//
// Reading is split from summarising so that the numbers can be checked
// without files: parse_log and summarise_run are pure; read_run gathers the
// files and calls them. Nothing in a run directory is an error: a missing,
// empty, truncated or corrupt log, a run with no validation yet or a run
// still in progress each become a note on the run. Only a RUN_DIR that does
// not exist is an Error.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::report {

// One line of the JSON log, with the fields the report uses.
struct LogEntry {
  std::string split;  // "train" | "valid" | "model" | "end"
  std::int64_t update = 0;
  double elapsed_s = 0.0;
  std::optional<double> loss, ppl, bleu, chrf, tokens_per_s;
};

struct ParsedLog {
  // Each sorted by update, one entry per update: when a resumed run logs an
  // update again, the later line wins and what the earlier process logged
  // after it (lost with its process) is dropped.
  std::vector<LogEntry> train, valid;
  std::int64_t lines = 0;       // non-blank lines read
  std::int64_t superseded = 0;  // lines replaced by a resume
  // The largest "peak_rss_mb" of any record, superseded ones included (their
  // process was part of the run too).
  std::optional<double> peak_rss_mb;
  // From the newest "model" record (written by each training process as it
  // starts): what the run trains, for a log read without its model files.
  std::string arch;     // "" when the log has no model record
  bool framed = false;  // it has a model record: its processes also write end records
  std::optional<std::int64_t> parameters;
  // "finished" or "interrupted" when the newest record is an "end" record
  // (the process stopped on its own or on a stop signal); "" otherwise.
  std::string end_reason;
  // That end record's update: the run's last, which train records (one per
  // --log-every updates) may not reach.
  std::int64_t end_update = 0;
  std::vector<std::string> notes;
};

// text: the whole log. Lines that are not JSON objects with a split and an
// update are skipped with a note (an unfinished last line is told apart: the
// run may still be writing it).
ParsedLog parse_log(std::string_view text);

// A point of a curve: x is the update or the elapsed seconds.
struct SeriesPoint {
  std::int64_t update = 0;
  double elapsed_s = 0.0;
  double value = 0.0;
};

// A test-set score file: BLEU and chrF of one model.
struct TestScore {
  std::optional<double> bleu, chrf;
  std::string file;  // the file's path in the run directory ("score/test2016.best.json")
};

// The scores of score/<set>.best.json and score/<set>.avg5.json for the first
// set, in name order, that is a plain test set (no ".join<K>" probe: no dot).
struct TestScores {
  std::string set;
  std::optional<TestScore> best, avg5;  // best.attn; avg5.attn, the average of the last 5 checkpoints
};

// Facts about a run's files that are not in the log.
struct RunFacts {
  bool has_log = false;
  // Seconds since the log was last written, and whether it was written after
  // the newest checkpoint (last.attn, else best.attn): for logs older than
  // end records, a log newer than it means the run was killed.
  double log_age_s = 0.0;
  bool log_after_checkpoint = false;
  // SAVE_DIR/attn.lock (core/dir_lock.h): held while attn train runs, so it
  // alone tells a live run from a stopped one.
  enum class Lock { none, held, free } lock = Lock::none;
  std::string arch;  // "" unknown
  std::optional<std::int64_t> parameters;
  std::string model_file;  // where arch and parameters came from
  std::optional<TestScores> test;
  std::vector<std::string> notes;  // from reading the files
};

struct RunSummary {
  std::string name;  // the directory's name
  std::string dir;   // as given
  std::string arch;
  std::optional<std::int64_t> parameters;
  std::optional<double> median_tokens_per_s;  // target tokens/s, train lines after the first 10% of updates
  std::optional<double> peak_rss_mb;          // the log's largest peak_rss_mb; nullopt: not recorded
  std::optional<double> best_valid_bleu, valid_chrf_at_best;
  std::optional<std::int64_t> best_update;
  std::optional<double> best_elapsed_s;
  std::optional<std::int64_t> updates;  // the last update logged
  std::optional<double> elapsed_s;      // wall time at the last line logged
  std::optional<TestScores> test;
  bool in_progress = false;                                    // a process holds the save dir's lock
  std::vector<SeriesPoint> train_loss, valid_ppl, valid_bleu;  // what the plots draw
  std::vector<std::string> notes;
};

// The median of tokens_per_s over train entries with update > 10% of the last
// update (all train entries when none is past it); nullopt without any.
std::optional<double> median_tokens_per_s(const std::vector<LogEntry>& train);

// The summary of one run from its parsed log and file facts.
RunSummary summarise_run(const std::string& name, const std::string& dir, const ParsedLog& log, const RunFacts& facts);

// Test scores in attn score's JSON (`--format json`: a list of metrics, or
// one metric's object as sacreBLEU writes it); nullopt when neither BLEU nor
// chrF is found.
std::optional<TestScore> parse_score_file(std::string_view text);

// Lines longer than this are not read (a log record is a few kB).
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

// The whole file, but for lines longer than kMaxLineBytes, which are left out
// and counted in *dropped. Only regular files are read (a FIFO would block,
// /dev/zero never end). Throws Error naming the file otherwise, or when it
// cannot be read.
std::string read_text(const std::filesystem::path& p, std::int64_t* dropped = nullptr);

// Whether `dir` holds anything of the run layout (log, checkpoint, lock, hyp/, score/).
bool holds_run(const std::filesystem::path& dir);

// Reads a run directory. Throws Error when `dir` does not exist or is not a directory.
RunSummary read_run(const std::filesystem::path& dir);

// Reads every run; names repeated across directories get their parent's name.
// Throws Error when a directory is missing or holds no run.
std::vector<RunSummary> read_runs(const std::vector<std::filesystem::path>& dirs);

// The table as JSON: {"runs": [{name, dir, arch, parameters, ..., notes}]}.
nlohmann::json runs_json(const std::vector<RunSummary>& runs);

}  // namespace attn::report
