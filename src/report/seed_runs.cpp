#include "attn/report/seed_runs.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "attn/core/error.h"

namespace attn::report {

namespace fs = std::filesystem;

namespace {

// The absolute path without a trailing '/', so that parent_path() climbs one folder.
fs::path normal_dir(const fs::path& dir) {
  fs::path normal = fs::absolute(dir).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();
  return normal;
}

// The directory's own name, also for "runs/x/" and ".".
std::string dir_name(const fs::path& dir) { return normal_dir(dir).filename().string(); }

std::optional<int> whole_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  int n = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return n;
}

// The files of `dir` whose names parse as outputs.
std::map<Output, fs::path> outputs_in(const fs::path& dir, std::string_view extension) {
  std::map<Output, fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension().string() != extension) continue;
    if (const auto output = output_of_file(name)) found[*output] = entry.path();
  }
  return found;
}

}  // namespace

std::optional<int> seed_of(const fs::path& dir) {
  const std::string name = dir_name(dir);
  if (name.rfind("seed", 0) != 0) return std::nullopt;
  return whole_number(std::string_view(name).substr(4));
}

std::optional<Output> output_of_file(std::string_view file_name) {
  const std::size_t ext = file_name.rfind('.');
  if (ext == std::string_view::npos) return std::nullopt;
  const std::string_view stem = file_name.substr(0, ext);
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == stem.size()) return std::nullopt;
  return Output{std::string(stem.substr(0, dot)), std::string(stem.substr(dot + 1))};
}

int joined_sentences(std::string_view set) {
  const std::size_t at = set.rfind(".join");
  if (at == std::string_view::npos) return 1;
  return whole_number(set.substr(at + 5)).value_or(1);
}

std::string base_set(std::string_view set) {
  const std::size_t at = set.rfind(".join");
  if (at == std::string_view::npos || !whole_number(set.substr(at + 5))) return std::string(set);
  return std::string(set.substr(0, at));
}

std::vector<SeedRun> find_seed_runs(const std::vector<RunSummary>& runs) {
  std::vector<SeedRun> found;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const fs::path dir = runs[k].dir;
    const std::optional<int> seed = seed_of(dir);
    if (!seed) continue;
    SeedRun run;
    run.run = k;
    run.seed = *seed;
    run.dir = dir;
    run.arch = runs[k].arch;
    const std::string folder = dir_name(normal_dir(dir).parent_path());
    if (run.arch.empty() || folder.starts_with(run.arch + "-")) run.arch = folder;
    run.hyps = outputs_in(dir / "hyp", ".txt");
    run.segments = outputs_in(dir / "segments", ".tsv");
    run.stats = outputs_in(dir / "stats", ".json");
    for (const auto& [output, file] : outputs_in(dir / "score", ".json")) {
      const std::string shown = "score/" + file.filename().string();
      try {
        if (std::optional<TestScore> score = parse_score_file(read_text(file))) {
          score->file = shown;
          run.score_files[output] = *score;
        } else {
          run.notes.push_back(shown + ": no BLEU or chrF score in it; ignored");
        }
      } catch (const Error& e) {
        run.notes.push_back(e.what());
      }
    }
    found.push_back(std::move(run));
  }
  // Two comparisons at once: the same arch and seed under two comparison folders.
  const auto comparison = [](const SeedRun& r) { return dir_name(normal_dir(r.dir).parent_path().parent_path()); };
  bool clash = false;
  for (std::size_t i = 0; i < found.size() && !clash; ++i)
    for (std::size_t j = i + 1; j < found.size() && !clash; ++j)
      clash = found[i].arch == found[j].arch && found[i].seed == found[j].seed &&
              comparison(found[i]) != comparison(found[j]);
  if (clash)
    for (SeedRun& r : found) r.arch = comparison(r) + "/" + r.arch;
  return found;
}

std::vector<int> ArchGroup::seeds() const {
  std::vector<int> seeds;
  for (const SeedRun* r : runs) seeds.push_back(r->seed);
  return seeds;
}

std::vector<ArchGroup> group_by_arch(const std::vector<SeedRun>& runs, const std::string& baseline) {
  std::vector<ArchGroup> groups;
  for (const SeedRun& run : runs) {
    auto group = std::find_if(groups.begin(), groups.end(), [&](const ArchGroup& g) { return g.arch == run.arch; });
    if (group == groups.end()) {
      groups.push_back({run.arch, {}});
      group = groups.end() - 1;
    }
    for (const SeedRun* other : group->runs)
      if (other->seed == run.seed)
        throw Error(other->dir.string() + " and " + run.dir.string() + " are both seed " + std::to_string(run.seed) +
                    " of " + run.arch +
                    "; give the runs of one comparison at a time, or keep two comparisons in "
                    "folders of different names");
    group->runs.push_back(&run);
  }
  for (ArchGroup& g : groups)
    std::sort(g.runs.begin(), g.runs.end(), [](const SeedRun* a, const SeedRun* b) { return a->seed < b->seed; });
  std::stable_partition(groups.begin(), groups.end(), [&](const ArchGroup& g) { return g.arch == baseline; });
  return groups;
}

Spread spread(std::span<const double> values) {
  Spread s;
  s.n = values.size();
  if (s.n == 0) return s;
  double sum = 0.0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;
  double squares = 0.0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  return s;
}

}  // namespace attn::report
