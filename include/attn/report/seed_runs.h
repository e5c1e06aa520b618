// The multi-seed comparison's run directories (the run layout of docs/report.md):
//   OUT/<arch>/seed<S>/log.jsonl                 attn train's log (its model record names the arch)
//   OUT/<arch>/seed<S>/hyp/<set>.<model>.txt     attn translate's output of RUN/<model>.attn, one line a test line
//   OUT/<arch>/seed<S>/score/<set>.<model>.json  attn score --format json of them (BLEU, chrF)
//   OUT/<arch>/seed<S>/stats/<set>.<model>.json  attn attn-stats of RUN/<model>.attn on the set (the attention)
// with <set> the test set ("test2016") or one of its long-input probes
// ("test2016.join4": K test sentences joined per line) and <model> the stem
// of the model file ("best", "avg5"). A run is a seed run when its directory is named seed<N>; seed runs
// of one arch form a group, whose seeds the page shows as a spread. A named
// variant of an arch (OUT/<arch>-<what>/seed<S>, e.g. "transformer-wide":
// the Transformer with other flags) is a group of its own, named by its folder.
// Runs of two comparisons given at once (OUT1/muse/seed1 and OUT2/muse/seed1)
// are told apart by the comparison's folder: when some arch and seed occur
// under two comparison folders, every group is named <comparison>/<arch>
// ("cmp7/muse", "cmp-long/muse").
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/report/run_summary.h"

namespace attn::report {

// The seed N of a directory named seed<N> (trailing '/' allowed); nullopt otherwise.
std::optional<int> seed_of(const std::filesystem::path& dir);

// One output of a run: a test set decoded with one model.
struct Output {
  std::string set;    // "test2016", "test2016.join4"
  std::string model;  // "best", "avg5"
  auto operator<=>(const Output&) const = default;
};

// "test2016.join4.best.txt" → {"test2016.join4", "best"} (any extension after the model);
// nullopt when the name has no set or model.
std::optional<Output> output_of_file(std::string_view file_name);

// K of a set: 1 for the test set itself, K for "<test>.join<K>".
int joined_sentences(std::string_view set);
// The test set a probe was made from: "test2016.join4" → "test2016".
std::string base_set(std::string_view set);

// The files of one seed run.
struct SeedRun {
  std::size_t run = 0;  // index into the runs given to find_seed_runs
  std::string arch;     // the log's arch, else the parent directory's name; <comparison>/<arch> when qualified
  int seed = 0;
  std::filesystem::path dir;
  std::map<Output, TestScore> score_files;           // score/<set>.<model>.json that parsed
  std::map<Output, std::filesystem::path> hyps;      // hyp/<set>.<model>.txt
  std::map<Output, std::filesystem::path> segments;  // segments/<set>.<model>.tsv (eval/segment_file.h)
  std::map<Output, std::filesystem::path> stats;     // stats/<set>.<model>.json (read when a claim needs them)
  std::vector<std::string> notes;                    // unreadable score files
};

// The seed runs among `runs` (the others are left out), in the order given,
// their arch qualified by the comparison folder when two comparisons share an
// arch and seed.
std::vector<SeedRun> find_seed_runs(const std::vector<RunSummary>& runs);

// Seed runs of one arch, seeds ascending.
struct ArchGroup {
  std::string arch;
  std::vector<const SeedRun*> runs;
  std::vector<int> seeds() const;
};

// Groups by arch: the baseline's group first, then the others in the order
// their first run was given. Throws Error when two runs are the same seed of
// the same arch (two comparisons in folders of the same name).
std::vector<ArchGroup> group_by_arch(const std::vector<SeedRun>& runs, const std::string& baseline);

// The mean and the sample standard deviation (n − 1; none for one value) of a few numbers.
struct Spread {
  std::size_t n = 0;
  double mean = 0.0;
  std::optional<double> sd;
};
Spread spread(std::span<const double> values);

}  // namespace attn::report
