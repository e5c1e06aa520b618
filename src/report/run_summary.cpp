#include "attn/report/run_summary.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <map>
#include <regex>

#include "attn/core/dir_lock.h"
#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/model/model_file.h"

namespace attn::report {

namespace fs = std::filesystem;

namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Drops the entries logged at `update` or later; returns how many.
std::int64_t drop_from(std::vector<LogEntry>& entries, std::int64_t update) {
  std::int64_t dropped = 0;
  while (!entries.empty() && entries.back().update >= update) {
    entries.pop_back();
    ++dropped;
  }
  return dropped;
}

// "convsan", or "muse + mha decoder" when the decoder has another mixer.
std::string arch_label(const std::string& arch, const std::string& decoder_mixer) {
  return arch + (decoder_mixer.empty() ? "" : " + " + decoder_mixer + " decoder");
}

std::string string_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string read_text(const fs::path& p, std::int64_t* dropped) {
  // A FIFO would block the report forever and /dev/zero fill the memory:
  // only regular files are read, opened without blocking and checked again.
  struct stat status {};
  if (::stat(p.c_str(), &status) != 0) throw Error(p.string() + ": cannot be read (" + std::strerror(errno) + ")");
  if (!S_ISREG(status.st_mode)) throw Error(p.string() + ": not a regular file; not read");
  const int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(p.string() + ": cannot be read (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) throw Error(p.string() + ": not a regular file; not read");
  std::string text;
  std::size_t line_start = 0;  // in text, of the line being read
  bool skipping = false;       // inside a line past kMaxLineBytes
  std::int64_t long_lines = 0;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(p.string() + ": cannot be read (" + std::strerror(errno) + ")");
    if (n == 0) break;
    for (std::string_view chunk(buffer, static_cast<std::size_t>(n)); !chunk.empty();) {
      const std::size_t newline = chunk.find('\n');
      const std::string_view part = chunk.substr(0, newline == std::string_view::npos ? chunk.size() : newline + 1);
      chunk.remove_prefix(part.size());
      if (!skipping) text.append(part);
      if (!skipping && text.size() - line_start > kMaxLineBytes) {
        text.resize(line_start);  // the line so far goes; the rest of it is not kept
        skipping = true;
        ++long_lines;
      }
      if (newline != std::string_view::npos) {
        skipping = false;
        line_start = text.size();
      }
    }
  }
  if (dropped) *dropped = long_lines;
  return text;
}

ParsedLog parse_log(std::string_view text) {
  ParsedLog log;
  std::int64_t bad = 0, first_bad = 0, incomplete = 0;
  std::int64_t line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const bool last_unterminated = end == std::string_view::npos;
    std::string_view line = text.substr(pos, last_unterminated ? std::string_view::npos : end - pos);
    pos = last_unterminated ? text.size() : end + 1;
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty()) continue;
    ++log.lines;
    const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    LogEntry e;
    bool ok = j.is_object() && j.contains("split") && j["split"].is_string() && j.contains("update") &&
              j["update"].is_number_integer();
    if (ok) {
      e.split = j["split"].get<std::string>();
      e.update = j["update"].get<std::int64_t>();
      const std::optional<double> elapsed = number(j, "elapsed_s");
      ok = elapsed.has_value();
      e.elapsed_s = elapsed.value_or(0.0);
    }
    if (!ok) {
      if (last_unterminated) {
        ++incomplete;  // the trainer may be writing it right now
      } else if (bad++ == 0) {
        first_bad = line_number;
      }
      continue;
    }
    if (e.split == "model") {
      log.framed = true;
      const auto config = j.find("config");
      log.arch = arch_label(string_field(j, "arch"),
                            config != j.end() && config->is_object() ? string_field(*config, "decoder_mixer") : "");
      const auto parameters = j.find("parameters");
      if (parameters != j.end() && parameters->is_number_integer()) log.parameters = parameters->get<std::int64_t>();
      log.end_reason.clear();
      continue;
    }
    if (e.split == "end") {
      log.end_reason = string_field(j, "reason");
      if (log.end_reason.empty()) log.end_reason = "finished";
      log.end_update = e.update;
      continue;
    }
    log.end_reason.clear();
    e.loss = number(j, "loss");
    e.ppl = number(j, "ppl");
    e.bleu = number(j, "bleu");
    e.chrf = number(j, "chrf");
    e.tokens_per_s = number(j, "tokens_per_s");
    if (const auto rss = number(j, "peak_rss_mb")) log.peak_rss_mb = std::max(log.peak_rss_mb.value_or(0.0), *rss);
    // A line whose update is not past the last one of its split comes from a
    // resumed process: it replaces what was logged from that update on (a
    // train line also the validations, which the earlier process logged after it).
    if (e.split == "train") {
      const std::int64_t replaced = drop_from(log.train, e.update);
      if (replaced > 0) log.superseded += replaced + drop_from(log.valid, e.update);
      log.train.push_back(std::move(e));
    } else if (e.split == "valid") {
      log.superseded += drop_from(log.valid, e.update);
      log.valid.push_back(std::move(e));
    }
    // Other splits (none today) are not the report's business.
  }
  if (bad > 0)
    log.notes.push_back("log.jsonl: " + plural(bad, "line is", "lines are") +
                        " not a JSON log record (the first is line " + std::to_string(first_bad) + "); skipped");
  if (incomplete > 0)
    log.notes.push_back("log.jsonl: the last line is unfinished (the run may be writing it); skipped");
  if (log.superseded > 0)
    log.notes.push_back(
        "log.jsonl: the run was resumed from an earlier checkpoint; " + plural(log.superseded, "line", "lines") +
        " logged after that checkpoint by the earlier process " + (log.superseded == 1 ? "was" : "were") + " replaced");
  return log;
}

std::optional<double> median_tokens_per_s(const std::vector<LogEntry>& train) {
  if (train.empty()) return std::nullopt;
  const std::int64_t last = train.back().update;
  std::vector<double> after, all;
  for (const LogEntry& e : train) {
    if (!e.tokens_per_s) continue;
    all.push_back(*e.tokens_per_s);
    if (static_cast<double>(e.update) > 0.1 * static_cast<double>(last)) after.push_back(*e.tokens_per_s);
  }
  std::vector<double>& v = after.empty() ? all : after;
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

RunSummary summarise_run(const std::string& name, const std::string& dir, const ParsedLog& log, const RunFacts& facts) {
  RunSummary s;
  s.name = name;
  s.dir = dir;
  s.arch = facts.arch;
  s.parameters = facts.parameters;
  s.test = facts.test;
  s.notes = facts.notes;
  s.notes.insert(s.notes.end(), log.notes.begin(), log.notes.end());

  for (const LogEntry& e : log.train)
    if (e.loss) s.train_loss.push_back({e.update, e.elapsed_s, *e.loss});
  for (const LogEntry& e : log.valid) {
    if (e.ppl) s.valid_ppl.push_back({e.update, e.elapsed_s, *e.ppl});
    if (e.bleu) s.valid_bleu.push_back({e.update, e.elapsed_s, *e.bleu});
  }
  s.median_tokens_per_s = median_tokens_per_s(log.train);

  // The best validation: the first with the highest BLEU (the trainer keeps
  // best.attn on strict improvement, so this is the update best.attn holds).
  const LogEntry* best = nullptr;
  for (const LogEntry& e : log.valid)
    if (e.bleu && (!best || *e.bleu > *best->bleu)) best = &e;
  if (best) {
    s.best_valid_bleu = best->bleu;
    s.valid_chrf_at_best = best->chrf;
    s.best_update = best->update;
    s.best_elapsed_s = best->elapsed_s;
  }

  for (const auto* entries : {&log.train, &log.valid})
    for (const LogEntry& e : *entries) {
      s.updates = std::max(s.updates.value_or(e.update), e.update);
      s.elapsed_s = std::max(s.elapsed_s.value_or(e.elapsed_s), e.elapsed_s);
    }
  if (!log.end_reason.empty() && s.updates) s.updates = std::max(*s.updates, log.end_update);
  s.peak_rss_mb = log.peak_rss_mb;

  // Only a process holding the save dir's lock is training it, whatever the log's age says.
  s.in_progress = facts.lock == RunFacts::Lock::held;
  if (!facts.has_log && s.in_progress)
    s.notes.push_back("in progress: a process holds its attn.lock but has not written log.jsonl yet");
  if (facts.has_log) {
    const bool any = !log.train.empty() || !log.valid.empty();
    if (log.lines == 0)
      s.notes.push_back("log.jsonl is empty: the run has not logged an update yet");
    else if (!any && !log.framed)
      s.notes.push_back("log.jsonl has no usable record");
    if (any && log.valid.empty())
      s.notes.push_back("no validation yet: best BLEU, and the update and time at best, are not known");
    else if (!log.valid.empty() && !best)
      s.notes.push_back("the validations logged no BLEU");
    // A log whose processes frame their part with model and end records (or a
    // run with a lock file) stopped without an end record only when killed.
    // Older logs had no end records: for them a log newer than the last
    // checkpoint tells it (the trainer saved last.attn after its last line).
    const bool framed = log.framed || facts.lock != RunFacts::Lock::none;
    const std::string at = "update " + std::to_string(s.updates.value_or(0)) + ", " +
                           format_duration(s.elapsed_s.value_or(0.0)) + " of training";
    if (s.in_progress) {
      s.notes.push_back(any ? "in progress: the numbers are as of " + at + " (the log was written " +
                                  format_fixed(std::max(0.0, facts.log_age_s), 0) + " s ago)"
                            : "in progress: a process holds its attn.lock but has logged no update yet");
    } else if (log.end_reason == "interrupted") {
      s.notes.push_back("stopped by SIGINT/SIGTERM/SIGHUP at update " + std::to_string(s.updates.value_or(0)) +
                        "; attn train with the same --save-dir resumes it");
    } else if (log.end_reason.empty() && (any ? framed || facts.log_after_checkpoint : framed)) {
      // A process killed before its first logged update left its model record, or (killed sooner) an
      // empty log beside its lock file.
      s.notes.push_back("stopped without an end record " + (any ? "at " + at : "before its first logged update") +
                        (facts.lock == RunFacts::Lock::free ? " (no process holds its attn.lock)" : "") +
                        ": killed, or its machine stopped; attn train with the same --save-dir resumes it "
                        "from its last checkpoint");
    }
  }
  return s;
}

std::optional<TestScore> parse_score_file(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const nlohmann::json list = j.is_object() ? nlohmann::json::array({j}) : j;
  if (!list.is_array()) return std::nullopt;
  TestScore score;
  for (const nlohmann::json& m : list) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string()) continue;
    const std::string name = m["name"].get<std::string>();
    const std::optional<double> v = number(m, "score");
    if (!v) continue;
    if (name == "BLEU")
      score.bleu = v;
    else if (name.rfind("chrF", 0) == 0)
      score.chrf = v;
  }
  if (!score.bleu && !score.chrf) return std::nullopt;
  return score;
}

namespace {

// The scores of best.attn and avg5.attn on the first set, in name order, that is a plain test set
// (no ".join<K>" probe: its name has no dot), from score/<set>.{best,avg5}.json.
std::optional<TestScores> read_test_scores(const fs::path& dir, std::vector<std::string>& notes) {
  static const std::regex kSetName(R"(([^.]+)\.(best|avg5)\.json)");
  std::string set;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "score", ec)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, kSetName) && (set.empty() || m[1].str() < set)) set = m[1].str();
  }
  if (set.empty()) return std::nullopt;
  TestScores scores;
  scores.set = set;
  auto read_one = [&](const std::string& model) -> std::optional<TestScore> {
    const std::string file = "score/" + set + "." + model + ".json";
    if (!fs::exists(dir / file)) return std::nullopt;
    std::optional<TestScore> s;
    try {
      s = parse_score_file(read_text(dir / file));
    } catch (const Error& e) {
      notes.push_back(e.what());
      return std::nullopt;
    }
    if (!s) {
      notes.push_back(file + ": no BLEU or chrF score in it; ignored");
      return std::nullopt;
    }
    s->file = file;
    return s;
  };
  scores.best = read_one("best");
  scores.avg5 = read_one("avg5");
  if (!scores.best && !scores.avg5) return std::nullopt;
  return scores;
}

double age_seconds(fs::file_time_type t) {
  return std::chrono::duration<double>(fs::file_time_type::clock::now() - t).count();
}

}  // namespace

RunSummary read_run(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) throw Error(dir.string() + ": no such run directory");
  if (!fs::is_directory(status))
    throw Error(dir.string() + ": not a directory; give run directories (attn train's --save-dir)");

  RunFacts facts;
  const fs::path log_path = dir / "log.jsonl";
  ParsedLog log;
  if (fs::exists(dir / "attn.lock")) facts.lock = DirLock::holder(dir) ? RunFacts::Lock::held : RunFacts::Lock::free;
  if (fs::exists(log_path)) {
    try {
      std::int64_t long_lines = 0;
      log = parse_log(read_text(log_path, &long_lines));
      if (long_lines > 0)
        log.notes.push_back("log.jsonl: " + plural(long_lines, "line is", "lines are") + " longer than " +
                            std::to_string(kMaxLineBytes >> 20) + " MiB, not a log record; skipped");
      facts.has_log = true;
      facts.log_age_s = age_seconds(fs::last_write_time(log_path));
    } catch (const Error& e) {
      facts.notes.push_back(e.what());
    }
  } else {
    facts.notes.push_back("no log.jsonl: no curves (attn train writes it with --log-json " +
                          (dir / "log.jsonl").string() + ")");
  }

  // Arch and size: from the log's model record (written by the trainer as it
  // starts), else from the smaller model file. The newest checkpoint's time
  // says whether an older log (without end records) went on after it.
  const fs::path best = dir / "best.attn", last = dir / "last.attn";
  if (!log.arch.empty()) {
    facts.arch = log.arch;
    facts.parameters = log.parameters;
    facts.model_file = "log.jsonl";
  }
  for (const fs::path& p : {best, last}) {
    if (!facts.model_file.empty() || !fs::exists(p)) continue;
    if (!fs::is_regular_file(p, ec)) {
      facts.notes.push_back(p.string() + ": not a regular file; arch and parameters not read from it");
      continue;
    }
    try {
      const model::LoadedModel loaded = model::load_model_values(p);
      const model::ModelConfig& c = loaded.model->config();
      facts.arch = arch_label(c.arch, c.decoder_mixer);
      facts.parameters = loaded.model->parameter_count();
      facts.model_file = p.filename().string();
    } catch (const Error& e) {
      facts.notes.push_back(std::string(e.what()) + "; arch and parameters not read from it");
    }
  }
  if (facts.model_file.empty() && !fs::exists(best) && !fs::exists(last))
    facts.notes.push_back("no best.attn or last.attn yet: arch and parameters are not known");
  const fs::path checkpoint = fs::exists(last) ? last : best;
  facts.log_after_checkpoint = true;
  if (facts.has_log && fs::exists(checkpoint))
    facts.log_after_checkpoint = fs::last_write_time(log_path, ec) > fs::last_write_time(checkpoint, ec);

  facts.test = read_test_scores(dir, facts.notes);

  fs::path normal = fs::absolute(dir).lexically_normal();  // "runs/x/" and "." name a directory too
  if (!normal.has_filename()) normal = normal.parent_path();
  std::string name = normal.filename().string();
  if (name.empty()) name = dir.string();
  return summarise_run(name, dir.string(), log, facts);
}

bool holds_run(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "log.jsonl" || name == "best.attn" || name == "last.attn" || name == "attn.lock" ||
        name.rfind("ckpt.", 0) == 0 || ((name == "hyp" || name == "score") && entry.is_directory(ec)))
      return true;
  }
  return false;
}

std::vector<RunSummary> read_runs(const std::vector<fs::path>& dirs) {
  // Every directory is checked before any is read, so a typo fails fast.
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!fs::exists(d, ec)) throw Error(d.string() + ": no such run directory");
    if (fs::is_directory(d, ec) && !holds_run(d))
      throw Error(d.string() + ": holds no training run (no log.jsonl, best.attn or last.attn); give the --save-dir "
                               "of an attn train run");
  }
  std::vector<RunSummary> runs;
  for (const fs::path& d : dirs) runs.push_back(read_run(d));
  // Runs of the same name are told apart by as many parent folders as it takes:
  // runs/compare/transformer and runs/transformer become compare/transformer and runs/transformer.
  std::vector<std::vector<std::string>> parts(runs.size());  // folder names, innermost first
  for (std::size_t i = 0; i < runs.size(); ++i) {
    fs::path p = fs::absolute(runs[i].dir).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    for (; !p.empty() && p.has_filename(); p = p.parent_path()) parts[i].push_back(p.filename().string());
  }
  auto suffix = [&](std::size_t i, std::size_t depth) {
    std::string name;
    for (std::size_t k = std::min(depth, parts[i].size()); k-- > 0;) name += parts[i][k] + (k ? "/" : "");
    return name.empty() ? runs[i].dir : name;
  };
  for (std::size_t depth = 2;; ++depth) {
    std::map<std::string, int> seen;
    for (const RunSummary& r : runs) ++seen[r.name];
    bool changed = false, clash = false;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (seen[runs[i].name] < 2) continue;
      clash = true;
      const std::string longer = suffix(i, depth);
      changed = changed || longer != runs[i].name;
      runs[i].name = longer;
    }
    if (!clash || !changed) break;  // unique, or the same directory given twice
  }
  return runs;
}

nlohmann::json runs_json(const std::vector<RunSummary>& runs) {
  auto opt = [](const auto& v) -> nlohmann::json { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto score = [&](const std::optional<TestScore>& s) -> nlohmann::json {
    if (!s) return nullptr;
    return {{"bleu", opt(s->bleu)}, {"chrf", opt(s->chrf)}, {"file", s->file}};
  };
  nlohmann::json list = nlohmann::json::array();
  for (const RunSummary& r : runs) {
    nlohmann::json j;
    j["name"] = r.name;
    j["dir"] = r.dir;
    j["arch"] = r.arch.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.arch);
    j["parameters"] = opt(r.parameters);
    j["median_target_tokens_per_s"] = opt(r.median_tokens_per_s);
    j["peak_rss_mb"] = opt(r.peak_rss_mb);
    j["best_valid_bleu"] = opt(r.best_valid_bleu);
    j["valid_chrf_at_best"] = opt(r.valid_chrf_at_best);
    j["best_update"] = opt(r.best_update);
    j["best_elapsed_s"] = opt(r.best_elapsed_s);
    j["updates"] = opt(r.updates);
    j["elapsed_s"] = opt(r.elapsed_s);
    if (r.test)
      j["test"] = {{"set", r.test->set}, {"best", score(r.test->best)}, {"avg5", score(r.test->avg5)}};
    else
      j["test"] = nullptr;
    j["in_progress"] = r.in_progress;
    j["notes"] = r.notes;
    list.push_back(std::move(j));
  }
  return {{"runs", list}};
}

}  // namespace attn::report
