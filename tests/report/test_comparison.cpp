// attn report's multi-seed comparison on synthetic run directories in
// experiments/compare.sh's layout (OUT/<arch>/seed<S>/{log.jsonl,hyp,score},
// OUT/refs): runs grouped by arch, mean ± sample sd against hand-computed
// values, Δ BLEU, per-seed and pooled p-values equal to eval's paired
// bootstrap called directly on the seed-matched statistics, BLEU by
// reference length, an arch missing some of the baseline's seeds, no --refs,
// bad inputs (exit 2, one line), and the page in headless Chromium.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "browser.h"
#include "attn/eval/by_length.h"
#include "attn/core/error.h"
#include "attn/eval/corpus_metric.h"
#include "attn/eval/segment_file.h"
#include "attn/eval/significance.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/seed_runs.h"

using namespace attn;
using attn::test::require_user_error;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

// 40 reference sentences of 3 to 70 words, so that every length bucket but one has segments.
std::vector<std::string> references() {
  static const char* kWords[] = {"a",    "dog",  "runs", "on",   "the",  "green", "grass", "while", "two", "children",
                                 "play", "with", "red",  "ball", "near", "old",   "house", "and",   "man", "watches"};
  std::vector<std::string> refs;
  for (int i = 0; i < 40; ++i) {
    const int words = i < 30 ? 3 + (i * 7) % 36 : 62 + i % 5;  // 3..38, and six of 62+; none in 41-60
    std::string line;
    for (int w = 0; w < words; ++w) line += std::string(w ? " " : "") + kWords[(i * 3 + w * 7 + w / 5) % 20];
    refs.push_back(line + " .");
  }
  return refs;
}

// A translation that differs from the reference by arch and seed: some words replaced, some lines cut short.
std::vector<std::string> translate(const std::vector<std::string>& refs, int arch, int seed) {
  std::vector<std::string> hyps;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    std::istringstream in(refs[i]);
    std::string word, line;
    int w = 0;
    while (in >> word) {
      // Appended, not assigned to `word`: GCC 12 at -O3 warns (-Wrestrict, falsely) on `word = "x"`
      // after the stream has written to it.
      const bool replaced = (static_cast<int>(i) * 5 + w * 3 + seed * 7 + arch * 11) % (4 + arch) == 0;
      if ((static_cast<int>(i) + seed + arch) % 9 == 0 && w > 4) break;
      if (w++) line += ' ';
      line += replaced ? std::string_view("x") : std::string_view(word);
    }
    hyps.push_back(line);
  }
  return hyps;
}

// Consecutive pairs of lines joined: the K = 2 probe.
std::vector<std::string> join_pairs(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < lines.size(); i += 2) out.push_back(lines[i] + " " + lines[i + 1]);
  return out;
}

json log_record_model(const std::string& arch) {
  return {{"split", "model"}, {"update", 0},        {"elapsed_s", 0.0},
          {"arch", arch},     {"parameters", 1000}, {"config", {{"arch", arch}}}};
}

std::string seed_log(const std::string& arch, int updates) {
  std::string text = log_record_model(arch).dump() + "\n";
  for (int u = 1; u <= updates; ++u)
    text += json{{"split", "train"},
                 {"update", u},
                 {"elapsed_s", 1.0 * u},
                 {"loss", 9.0 - 0.1 * u},
                 {"tokens_per_s", 100.0}}
                .dump() +
            "\n";
  text += json{{"split", "end"}, {"update", updates}, {"elapsed_s", 1.0 * updates}, {"reason", "finished"}}.dump() +
          "\n";
  return text;
}

std::string score_json(double bleu, double chrf) {
  return json::array({{{"name", "BLEU"}, {"score", bleu}}, {{"name", "chrF2"}, {"score", chrf}}}).dump(1);
}

// OUT/<arch>/seed<S> for transformer (arch 0) and muse (arch 1), seeds given per arch; OUT/refs/test.en and
// test.join2.en. The score files hold hand-picked numbers (not the translations' scores), so a test can tell which
// were read.
struct Fixture {
  test::ScratchDir dir;
  fs::path out;
  std::vector<std::string> refs = references();
  std::map<std::string, std::vector<int>> seeds;
  // The score files' numbers: [arch][seed] → (BLEU, chrF) of test.best.
  std::map<std::string, std::map<int, std::pair<double, double>>> best_scores;

  explicit Fixture(std::vector<int> muse_seeds = {1, 2, 3}) {
    out = dir.path() / "cmp";
    seeds = {{"transformer", {1, 2, 3}}, {"muse", muse_seeds}};
    best_scores["transformer"] = {{1, {30.0, 50.0}}, {2, {32.0, 51.0}}, {3, {34.0, 53.0}}};
    best_scores["muse"] = {{1, {29.0, 49.0}}, {2, {30.0, 52.0}}, {3, {34.0, 55.0}}, {4, {40.0, 60.0}}};
    write_file(out / "refs" / "test.en", joined(refs));
    write_file(out / "refs" / "test.join2.en", joined(join_pairs(refs)));
    int arch_index = 0;
    for (const auto& name : {"transformer", "muse"}) {
      for (int seed : seeds[name]) {
        const fs::path run = out / name / ("seed" + std::to_string(seed));
        write_file(run / "log.jsonl", seed_log(name, 20 + seed));
        for (const std::string model : {"best", "avg5"}) {
          const std::vector<std::string> hyps = translate(refs, arch_index * 2 + (model == "avg5"), seed);
          write_file(run / "hyp" / ("test." + model + ".txt"), joined(hyps));
          write_file(run / "hyp" / ("test.join2." + model + ".txt"), joined(join_pairs(hyps)));
          const auto [bleu, chrf] = best_scores[name][seed];
          const double shift = model == "avg5" ? 1.0 : 0.0;
          write_file(run / "score" / ("test." + model + ".json"), score_json(bleu + shift, chrf + shift));
          write_file(run / "score" / ("test.join2." + model + ".json"), score_json(bleu - 10, chrf - 10));
        }
      }
      ++arch_index;
    }
  }

  fs::path run(const std::string& arch, int seed) const { return out / arch / ("seed" + std::to_string(seed)); }

  // Muse first on the command line: the baseline still comes first.
  std::vector<fs::path> dirs() const {
    std::vector<fs::path> d;
    for (const auto& name : {"muse", "transformer"})
      for (int seed : seeds.at(name)) d.push_back(run(name, seed));
    return d;
  }

  std::string dir_args() const {
    std::string args;
    for (const fs::path& d : dirs()) args.append(" ").append(d.string());
    return args;
  }

  report::Comparison compare(bool with_refs) const {
    report::ComparisonOptions options;
    if (with_refs) options.refs = out / "refs";
    return report::compare_seed_runs(report::read_runs(dirs()), options);
  }

  // BLEU rows of a translation file against a reference file, as eval computes them.
  static eval::SegmentStats stats(const fs::path& hyp, const fs::path& ref) {
    const std::vector<std::vector<std::string>> r{split(test::slurp(ref))};
    return eval::bleu_metric({}).corpus_stats(split(test::slurp(hyp)), r);
  }
  static std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

const report::OutputSummary& output(const report::ArchSummary& a, const std::string& set, const std::string& model) {
  const auto it = a.outputs.find(report::Output{set, model});
  REQUIRE(it != a.outputs.end());
  return it->second;
}

bool mentions(const std::vector<std::string>& notes, const std::string& needle) {
  for (const std::string& n : notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("report comparison: seed directories, output file names, probes and the sample sd", "[report]") {
  REQUIRE(report::seed_of("runs/cmp/muse/seed3") == 3);
  REQUIRE(report::seed_of("runs/cmp/muse/seed12/") == 12);
  REQUIRE_FALSE(report::seed_of("runs/cmp/muse"));
  REQUIRE_FALSE(report::seed_of("runs/seedling"));
  REQUIRE_FALSE(report::seed_of("runs/seed"));

  const auto o = report::output_of_file("test2016.join4.avg5.txt");
  REQUIRE(o);
  REQUIRE(o->set == "test2016.join4");
  REQUIRE(o->model == "avg5");
  REQUIRE(report::output_of_file("test2016.best.json")->set == "test2016");
  REQUIRE_FALSE(report::output_of_file("best.txt"));
  REQUIRE_FALSE(report::output_of_file("notes"));
  REQUIRE(report::joined_sentences("test2016") == 1);
  REQUIRE(report::joined_sentences("test2016.join6") == 6);
  REQUIRE(report::base_set("test2016.join6") == "test2016");
  REQUIRE(report::base_set("test2016") == "test2016");

  const std::vector<double> three{29.0, 30.0, 34.0};
  const report::Spread s = report::spread(three);
  REQUIRE(s.n == 3);
  REQUIRE(s.mean == Approx(31.0));
  REQUIRE(*s.sd == Approx(std::sqrt(7.0)));  // ((−2)² + (−1)² + 3²) / (3 − 1)
  const std::vector<double> one{5.0};
  REQUIRE(report::spread(one).mean == 5.0);
  REQUIRE_FALSE(report::spread(one).sd);
  REQUIRE(report::spread(std::vector<double>{}).n == 0);

  REQUIRE(report::verdict(0.5, 0.01) == "better");
  REQUIRE(report::verdict(-0.5, 0.01) == "worse");
  REQUIRE(report::verdict(0.5, 0.05) == "not distinguishable");
  REQUIRE(report::verdict(-2.0, 0.3) == "not distinguishable");
}

TEST_CASE("report comparison: runs grouped by arch, mean ± sd and Δ from the score files without --refs", "[report]") {
  Fixture f;
  const report::Comparison c = f.compare(false);
  REQUIRE(c.archs.size() == 2);
  REQUIRE(c.has_baseline);
  REQUIRE(c.archs[0].arch == "transformer");  // the baseline first, though given second
  REQUIRE(c.archs[1].arch == "muse");
  REQUIRE(c.archs[0].seeds == std::vector<int>{1, 2, 3});
  REQUIRE(c.archs[1].seeds == std::vector<int>{1, 2, 3});
  REQUIRE(c.main_set == "test");
  REQUIRE(c.sets == std::vector<std::string>{"test", "test.join2"});
  REQUIRE(c.models == std::vector<std::string>{"best", "avg5"});
  REQUIRE(*c.archs[0].updates_min == 21);
  REQUIRE(*c.archs[0].updates_max == 23);

  // transformer BLEU 30, 32, 34: mean 32, sd 2; chrF 50, 51, 53: mean 51.33, sd √(7/3).
  const report::OutputSummary& t = output(c.archs[0], "test", "best");
  REQUIRE(t.bleu.n == 3);
  REQUIRE(t.bleu.mean == Approx(32.0));
  REQUIRE(*t.bleu.sd == Approx(2.0));
  REQUIRE(t.chrf.mean == Approx(154.0 / 3));
  REQUIRE(*t.chrf.sd == Approx(std::sqrt(7.0 / 3)));
  REQUIRE(t.seeds[0].source == "score/test.best.json");
  REQUIRE_FALSE(t.delta_bleu);  // the baseline has none
  // muse 29, 30, 34: mean 31, sd √7; Δ = mean(−1, −2, 0) = −1.
  const report::OutputSummary& m = output(c.archs[1], "test", "best");
  REQUIRE(m.bleu.mean == Approx(31.0));
  REQUIRE(*m.bleu.sd == Approx(std::sqrt(7.0)));
  REQUIRE(*m.delta_bleu == Approx(-1.0));
  REQUIRE(m.delta_seeds == std::vector<int>{1, 2, 3});
  REQUIRE(output(c.archs[1], "test", "avg5").bleu.mean == Approx(32.0));
  REQUIRE(output(c.archs[1], "test.join2", "best").bleu.mean == Approx(21.0));
  // No references: no p-values, no length buckets, and a note saying how to get them.
  REQUIRE_FALSE(m.paired);
  REQUIRE(c.buckets.empty());
  REQUIRE(c.archs[1].by_length.empty());
  REQUIRE(mentions(c.notes, "no --refs"));

  const std::vector<report::RunSummary> runs = report::read_runs(f.dirs());
  const std::string page = report::report_page(runs, c);
  REQUIRE(count(page, "<tr class=\"arch\"") == 2);
  REQUIRE(page.find("31.00 ± 2.65") != std::string::npos);  // muse: 31 ± √7
  REQUIRE(page.find("32.00 ± 2.00") != std::string::npos);
  REQUIRE(page.find("no --refs") != std::string::npos);
  REQUIRE(page.find("data-plot=\"bleu-by-length\"") == std::string::npos);
  REQUIRE(page.find("data-plot=\"bleu-by-k\"") != std::string::npos);  // the probes need no references
  REQUIRE(count(page, "<polyline class=\"curve\" data-arch=") == 2);
  REQUIRE(count(page, "<tr class=\"run\"") == 6);  // the seeds' own rows stay, after the curves
  REQUIRE(page.find("id=\"comparison\"") < page.find("id=\"curves\""));
  REQUIRE(page.find("id=\"curves\"") < page.find("id=\"table\""));
  // Seeds of one arch share a hue: the runs' colours are hsl(<arch hue>, ...).
  const std::regex colour_re("<tr class=\"run\" data-run=\"([a-z]+)/seed[0-9]\" style=\"--c:hsl\\(([0-9]+),");
  std::map<std::string, std::set<std::string>> hues;
  for (std::sregex_iterator it(page.begin(), page.end(), colour_re), end; it != end; ++it)
    hues[(*it)[1].str()].insert((*it)[2].str());
  REQUIRE(hues.size() == 2);
  REQUIRE(hues["muse"].size() == 1);
  REQUIRE(hues["transformer"].size() == 1);
  REQUIRE(*hues["muse"].begin() != *hues["transformer"].begin());
}

TEST_CASE("report comparison: a named variant of an arch (OUT/<arch>-<what>/seed<S>) is a group of its own",
          "[report]") {
  Fixture f;
  std::vector<fs::path> dirs = f.dirs();
  for (int seed : {1, 2}) {
    const fs::path wide = f.out / "transformer-wide" / ("seed" + std::to_string(seed));
    fs::create_directories(wide.parent_path());
    fs::copy(f.run("transformer", seed), wide, fs::copy_options::recursive);  // its log says "transformer"
    dirs.push_back(wide);
  }
  const report::Comparison c = report::compare_seed_runs(report::read_runs(dirs), {});
  REQUIRE(c.archs.size() == 3);
  REQUIRE(c.archs[0].arch == "transformer");
  REQUIRE(c.archs[0].seeds == std::vector<int>{1, 2, 3});
  REQUIRE(c.archs[2].arch == "transformer-wide");
  REQUIRE(c.archs[2].seeds == std::vector<int>{1, 2});
}

TEST_CASE("report comparison: with --refs, scores from the translations and seed-matched paired bootstrap",
          "[report]") {
  Fixture f;
  const report::Comparison c = f.compare(true);
  REQUIRE(c.archs.size() == 2);
  const eval::CorpusMetric bleu = eval::bleu_metric({});
  for (const std::string set : {"test", "test.join2"})
    for (const std::string model : {"best", "avg5"}) {
      INFO(set << " " << model);
      const fs::path ref = f.out / "refs" / (set + ".en");
      std::vector<eval::SegmentStats> base, muse;
      std::vector<double> base_scores, muse_scores;
      for (int seed : {1, 2, 3}) {
        base.push_back(Fixture::stats(f.run("transformer", seed) / "hyp" / (set + "." + model + ".txt"), ref));
        muse.push_back(Fixture::stats(f.run("muse", seed) / "hyp" / (set + "." + model + ".txt"), ref));
        base_scores.push_back(bleu.score(base.back().sum()));
        muse_scores.push_back(bleu.score(muse.back().sum()));
      }
      const report::OutputSummary& o = output(c.archs[1], set, model);
      // The scores are the translations', not the score files'.
      REQUIRE(o.seeds[0].source == "hyp");
      REQUIRE(o.bleu.mean == Approx((muse_scores[0] + muse_scores[1] + muse_scores[2]) / 3));
      REQUIRE(*o.delta_bleu == Approx((muse_scores[0] + muse_scores[1] + muse_scores[2] - base_scores[0] -
                                       base_scores[1] - base_scores[2]) /
                                      3));
      REQUIRE(o.paired);
      REQUIRE(o.paired->seeds == std::vector<int>{1, 2, 3});
      for (std::size_t i = 0; i < 3; ++i)
        REQUIRE(o.paired->p_per_seed[i] == eval::paired_bootstrap(base[i], muse[i], bleu.score, 1000, 12345).p_value);
      // Pooled: seeds 1..3 of muse against seeds 1..3 of transformer as one sample.
      eval::SegmentStats pooled_base, pooled_muse;
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t s = 0; s < base[i].segments(); ++s) {
          pooled_base.append(base[i].row(s));
          pooled_muse.append(muse[i].row(s));
        }
      const eval::PairedResult pooled = eval::paired_bootstrap(pooled_base, pooled_muse, bleu.score, 1000, 12345);
      REQUIRE(o.paired->p_pooled == pooled.p_value);
      REQUIRE(o.paired->pooled_score == pooled.score);
      REQUIRE(o.paired->pooled_baseline_score == bleu.score(pooled_base.sum()));
      REQUIRE(o.paired->p_pooled > 0.0);
      REQUIRE(o.paired->p_pooled <= 1.0);
    }
  REQUIRE_FALSE(output(c.archs[0], "test", "best").paired);  // the baseline is not tested against itself

  // JSON: every aggregated number.
  const json j = report::report_json(report::read_runs(f.dirs()), c);
  const json& cj = j["comparison"];
  REQUIRE(cj["baseline"] == "transformer");
  REQUIRE(cj["archs"].size() == 2);
  const json& first_output = cj["archs"][1]["outputs"][0];  // ordered by (set, model): test.avg5 first
  REQUIRE(first_output["set"] == "test");
  REQUIRE(first_output["model"] == "avg5");
  REQUIRE(first_output["paired_bootstrap"]["p_pooled"] == output(c.archs[1], "test", "avg5").paired->p_pooled);
  REQUIRE(first_output["paired_bootstrap"]["p_per_seed"].size() == 3);
  REQUIRE(first_output["bleu"]["sd"] == *output(c.archs[1], "test", "avg5").bleu.sd);
  REQUIRE(cj["archs"][1]["bleu_by_length"]["best"].size() == 6);
}

TEST_CASE("report comparison: BLEU by reference length is the mean over seeds of each bucket's BLEU", "[report]") {
  Fixture f;
  const report::Comparison c = f.compare(true);
  REQUIRE(c.buckets.size() == 6);
  const std::vector<eval::LengthBucket> want = eval::bucket_by_reference_length(f.refs);
  std::size_t filled = 0;
  for (std::size_t b = 0; b < 6; ++b) {
    REQUIRE(c.buckets[b].label == want[b].label);
    REQUIRE(c.buckets[b].segments == want[b].segments);
    filled += !want[b].segments.empty();
  }
  REQUIRE(filled == 5);  // 41-60 is empty
  const eval::CorpusMetric bleu = eval::bleu_metric({});
  for (std::size_t a = 0; a < 2; ++a) {
    const std::string name = c.archs[a].arch;
    const std::vector<report::Spread>& profile = c.archs[a].by_length.at("best");
    REQUIRE(profile.size() == 6);
    for (std::size_t b = 0; b < 6; ++b) {
      INFO(name << " bucket " << want[b].label);
      if (want[b].segments.empty()) {
        REQUIRE(profile[b].n == 0);
        continue;
      }
      std::vector<double> per_seed;
      for (int seed : {1, 2, 3})
        per_seed.push_back(*eval::bucket_score(
            want[b], Fixture::stats(f.run(name, seed) / "hyp" / "test.best.txt", f.out / "refs" / "test.en"),
            bleu.score));
      REQUIRE(profile[b].n == 3);
      REQUIRE(profile[b].mean == Approx((per_seed[0] + per_seed[1] + per_seed[2]) / 3));
      REQUIRE(*profile[b].sd == Approx(report::spread(per_seed).sd.value()));
    }
  }
  // The chart: one line per arch with one vertex per non-empty bucket.
  const std::string page = report::report_page(report::read_runs(f.dirs()), c);
  const std::size_t chart = page.find("data-plot=\"bleu-by-length\"");
  REQUIRE(chart != std::string::npos);
  const std::string svg = page.substr(chart, page.find("</figure>", chart) - chart);
  REQUIRE(count(svg, "<polyline class=\"curve\" data-arch=\"transformer\" data-points=\"5\"") == 1);
  REQUIRE(count(svg, "<polyline class=\"curve\" data-arch=\"muse\" data-points=\"5\"") == 1);
  REQUIRE(svg.find("61+") != std::string::npos);
}

TEST_CASE("report comparison: an arch without some of the baseline's seeds is paired on the common seeds only",
          "[report]") {
  Fixture f({1, 2, 4});
  const report::Comparison c = f.compare(true);
  const report::ArchSummary& muse = c.archs[1];
  REQUIRE(muse.seeds == std::vector<int>{1, 2, 4});
  const report::OutputSummary& o = output(muse, "test", "best");
  REQUIRE(o.bleu.n == 3);  // the spread is over all its seeds
  REQUIRE(o.delta_seeds == std::vector<int>{1, 2});
  REQUIRE(o.paired->seeds == std::vector<int>{1, 2});
  REQUIRE(o.paired->p_per_seed.size() == 2);
  const eval::CorpusMetric bleu = eval::bleu_metric({});
  const fs::path ref = f.out / "refs" / "test.en";
  eval::SegmentStats pooled_base, pooled_muse;
  for (int seed : {1, 2}) {
    const eval::SegmentStats b = Fixture::stats(f.run("transformer", seed) / "hyp" / "test.best.txt", ref);
    const eval::SegmentStats m = Fixture::stats(f.run("muse", seed) / "hyp" / "test.best.txt", ref);
    for (std::size_t s = 0; s < b.segments(); ++s) {
      pooled_base.append(b.row(s));
      pooled_muse.append(m.row(s));
    }
  }
  REQUIRE(o.paired->p_pooled == eval::paired_bootstrap(pooled_base, pooled_muse, bleu.score, 1000, 12345).p_value);
  const std::string note =
      "compared with transformer on the common seeds 1, 2 only: muse has no seed 3 and transformer has no seed 4";
  REQUIRE(mentions(muse.notes, note));
  const std::string page = report::report_page(report::read_runs(f.dirs()), c);
  REQUIRE(page.find(note) != std::string::npos);
  REQUIRE(page.find("<small>seeds 1, 2</small>") != std::string::npos);  // beside the Δ
}

// Every translation of `f` replaced by its segment file (attn score --segments), as an archive keeps it.
void translations_to_segments(const Fixture& f, const std::string& extra_flags = "") {
  for (const fs::path& run : f.dirs()) {
    for (const auto& hyp : fs::directory_iterator(run / "hyp")) {
      const std::string name = hyp.path().filename().string();
      const std::string set = name.substr(0, name.rfind('.', name.size() - 5));
      const fs::path segments = run / "segments" / (hyp.path().stem().string() + ".tsv");
      fs::create_directories(segments.parent_path());
      const auto r = run_attn("score --ref " + (f.out / "refs" / (set + ".en")).string() + " -i " +
                              hyp.path().string() + " --segments " + segments.string() + extra_flags);
      INFO(r.err);
      REQUIRE(r.status == 0);
    }
    fs::remove_all(run / "hyp");
  }
}

TEST_CASE("report comparison: segments/ in place of the translations give the same numbers, without --refs",
          "[report][cli]") {
  const Fixture with_text;
  const Fixture f;
  translations_to_segments(f);
  const report::Comparison want = with_text.compare(true);
  for (const bool with_refs : {false, true}) {
    INFO("with --refs: " << with_refs);
    const report::Comparison got = f.compare(with_refs);
    REQUIRE(got.notes.empty());
    REQUIRE(got.archs.size() == want.archs.size());
    REQUIRE(got.buckets.size() == want.buckets.size());
    for (std::size_t b = 0; b < want.buckets.size(); ++b) {
      REQUIRE(got.buckets[b].segments == want.buckets[b].segments);
      REQUIRE(got.buckets[b].words == want.buckets[b].words);
    }
    for (std::size_t a = 0; a < want.archs.size(); ++a) {
      REQUIRE(got.archs[a].by_length.at("best").size() == 6);
      for (std::size_t b = 0; b < 6; ++b)
        REQUIRE(got.archs[a].by_length.at("best")[b].mean == want.archs[a].by_length.at("best")[b].mean);
      for (const auto& [output, o] : want.archs[a].outputs) {
        INFO(want.archs[a].arch << " " << output.set << " " << output.model);
        const report::OutputSummary& g = got.archs[a].outputs.at(output);
        REQUIRE(g.seeds.size() == o.seeds.size());
        for (std::size_t s = 0; s < o.seeds.size(); ++s) {
          REQUIRE(g.seeds[s].source == "segments");
          REQUIRE(*g.seeds[s].bleu == *o.seeds[s].bleu);
          REQUIRE(*g.seeds[s].chrf == *o.seeds[s].chrf);
          REQUIRE(g.seeds[s].bleu_stats->values == o.seeds[s].bleu_stats->values);
        }
        REQUIRE(g.paired.has_value() == o.paired.has_value());
        if (o.paired) {
          REQUIRE(g.paired->p_per_seed == o.paired->p_per_seed);
          REQUIRE(g.paired->p_pooled == o.paired->p_pooled);
        }
      }
    }
  }
  // The page says nothing of missing references.
  const auto r = run_attn("report" + f.dir_args() + " --json");
  REQUIRE(r.status == 0);
  REQUIRE(r.out.find("no --refs") == std::string::npos);
}

TEST_CASE("report comparison: a segment file scored otherwise, against another reference or broken is refused",
          "[report][cli]") {
  {
    const Fixture f;
    translations_to_segments(f);
    // Another reference: one line of test.en with a word more.
    std::vector<std::string> refs = f.refs;
    refs[3] += " more";
    write_file(f.out / "refs" / "test.en", joined(refs));
    REQUIRE_THROWS_WITH(f.compare(true), Catch::Contains("segment 4 was scored against a reference of") &&
                                             Catch::Contains("scored against another reference"));
    write_file(f.out / "refs" / "test.en", joined(std::vector<std::string>(f.refs.begin(), f.refs.end() - 1)));
    REQUIRE_THROWS_WITH(f.compare(true), Catch::Contains("40 segments but the reference"));
    REQUIRE_NOTHROW(f.compare(false));
    // A broken row: one line with a number missing.
    const fs::path file = f.run("muse", 2) / "segments" / "test.best.tsv";
    std::string text = test::slurp(file);
    const std::size_t row = text.find('\n', text.find("\n#metric chrF2") + 1) + 1;
    text.erase(text.find(' ', row), text.find(' ', text.find(' ', row) + 1) - text.find(' ', row));
    write_file(file, text);
    REQUIRE_THROWS_WITH(f.compare(false), Catch::Contains(file.string() + ":4: BLEU needs 10 numbers, found 9"));
    require_user_error(run_attn("report" + f.dir_args() + " --json"), file.string() + ":4: BLEU needs 10 numbers");
  }
  {
    const Fixture f;
    translations_to_segments(f, " --tokenize intl");
    REQUIRE_THROWS_WITH(f.compare(false),
                        Catch::Contains("its BLEU was computed as nrefs:1|case:mixed|eff:no|tok:intl") &&
                            Catch::Contains("attn report compares"));
  }
}

TEST_CASE("score --segments: each line's rows of every metric and its reference's words; one system only",
          "[eval][cli]") {
  const Fixture f;
  const fs::path hyp = f.run("muse", 1) / "hyp" / "test.best.txt", ref = f.out / "refs" / "test.en";
  const fs::path file = f.dir.path() / "seg.tsv";
  const auto r = run_attn("score --ref " + ref.string() + " -i " + hyp.string() + " --segments " + file.string() +
                          " -m bleu,chrf,ter");
  REQUIRE(r.status == 0);
  const eval::SegmentFile read = eval::parse_segment_file(test::slurp(file), file.string());
  REQUIRE(read.segments() == f.refs.size());
  const std::vector<std::vector<std::string>> refs{f.refs};
  const std::vector<std::string> hyps = Fixture::split(test::slurp(hyp));
  for (const eval::CorpusMetric& metric : {eval::bleu_metric({}), eval::chrf_metric({}), eval::ter_metric({})}) {
    const eval::SegmentFile::Metric* m = read.find(metric.name);
    REQUIRE(m != nullptr);
    REQUIRE(m->signature == metric.signature(1));
    const eval::SegmentStats want = metric.corpus_stats(hyps, refs);
    REQUIRE(m->stats.fields == want.fields);
    REQUIRE(m->stats.values == want.values);  // to the last bit: the text round-trips
  }
  for (std::size_t i = 0; i < f.refs.size(); ++i)
    REQUIRE(read.reference_words[i] ==
            static_cast<std::int64_t>(
                Fixture::split(f.refs[i]).size() == 0 ? 0 : std::count(f.refs[i].begin(), f.refs[i].end(), ' ') + 1));
  // Written again from what was read: the same bytes.
  REQUIRE(eval::format_segment_file(read) == test::slurp(file));
  // Two systems, or --sentence-level: refused before anything is written.
  const fs::path none = f.dir.path() / "none.tsv";
  require_user_error(run_attn("score --ref " + ref.string() + " -i " + hyp.string() + " -i " + ref.string() +
                              " --segments " + none.string()),
                     "--segments keeps one system's statistics");
  require_user_error(run_attn("score --ref " + ref.string() + " -i " + hyp.string() + " --sentence-level --segments " +
                              none.string()),
                     "--segments keeps one system's statistics");
  REQUIRE_FALSE(fs::exists(none));
  require_user_error(run_attn("score --ref " + ref.string() + " -i " + hyp.string() + " --segments -"),
                     "--segments needs a file name");
  // Malformed files: one line naming the file and line.
  const auto error_of = [](const std::string& text) {
    try {
      eval::parse_segment_file(text, "f.tsv");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "#attn-segments 1\n#metric BLEU 2 sig\n";
  REQUIRE_THAT(error_of("hello\n"), Catch::StartsWith("f.tsv:1: not a segment statistics file"));
  REQUIRE_THAT(error_of("#attn-segments 1\n3\t1 2\n"), Catch::StartsWith("f.tsv:2: no #metric line"));
  REQUIRE_THAT(error_of("#attn-segments 1\n#metric BLEU x sig\n"), Catch::StartsWith("f.tsv:2: a #metric line"));
  REQUIRE_THAT(error_of(head), Catch::StartsWith("f.tsv:3: no segment lines"));
  REQUIRE_THAT(error_of(head + "3\t1\n"), Catch::StartsWith("f.tsv:3: BLEU needs 2 numbers, found 1"));
  REQUIRE_THAT(error_of(head + "3 1 2\n"), Catch::StartsWith("f.tsv:3: expected the reference's words"));
  REQUIRE_THAT(error_of(head + "-1\t1 2\n"), Catch::StartsWith("f.tsv:3: the reference's word count"));
  REQUIRE_THAT(error_of(head + "3\t1 nan\n"), Catch::StartsWith("f.tsv:3: BLEU value 'nan'"));
  REQUIRE_THAT(error_of(head + "3\t1 -2\n"), Catch::StartsWith("f.tsv:3: BLEU value '-2'"));
  REQUIRE(error_of(head + "3\t1 2.5\n0\t0 0") == "no error");
}

TEST_CASE("report comparison (cli): --refs, --baseline and --json; bad inputs are one line and exit 2",
          "[report][cli][e2e]") {
  Fixture f;
  const fs::path html = f.dir.path() / "cmp.html";
  const auto r =
      run_attn("report" + f.dir_args() + " --refs " + (f.out / "refs").string() + " -o " + html.string() + " --json");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["runs"].size() == 6);
  REQUIRE(j["comparison"]["archs"][0]["arch"] == "transformer");
  REQUIRE(j["comparison"]["archs"][1]["outputs"][1]["paired_bootstrap"]["verdict"].is_string());
  REQUIRE(fs::exists(html));

  // Another baseline: muse first, transformer's Δ is the opposite of muse's.
  const auto other = run_attn("report" + f.dir_args() + " --baseline muse --json");
  REQUIRE(other.status == 0);
  const json o = json::parse(other.out);
  REQUIRE(o["comparison"]["archs"][0]["arch"] == "muse");
  REQUIRE(o["comparison"]["archs"][1]["outputs"][1]["delta_bleu"].get<double>() == Approx(1.0));  // test.best
  // An unknown baseline: the table still comes, without Δ, and says why.
  const auto none = run_attn("report" + f.dir_args() + " --baseline nope --json");
  REQUIRE(none.status == 0);
  REQUIRE(json::parse(none.out)["comparison"]["baseline"].is_null());
  REQUIRE(none.out.find("no seed runs of the baseline nope") != std::string::npos);

  // A translation one line short: exit 2, one line naming the file, nothing written.
  const fs::path broken = f.run("muse", 2) / "hyp" / "test.avg5.txt";
  std::string text = test::slurp(broken);
  text.erase(text.rfind('\n', text.size() - 2) + 1);
  write_file(broken, text);
  const fs::path html2 = f.dir.path() / "broken.html";
  require_user_error(run_attn("report" + f.dir_args() + " --refs " + (f.out / "refs").string() + " -o " +
                              html2.string()),
                     broken.string() + " has 39 lines but its reference");
  REQUIRE_FALSE(fs::exists(html2));
  // Without --refs the translations are not read: the score files still give the table.
  REQUIRE(run_attn("report" + f.dir_args() + " --json").status == 0);

  require_user_error(run_attn("report" + f.dir_args() + " --refs " + (f.dir.path() / "norefs").string() + " --json"),
                     "norefs: no such directory");
  // The same seed of the same arch twice: two comparisons at once, told apart by their folders' names.
  fs::create_directories(f.dir.path() / "again" / "muse");
  fs::copy(f.run("muse", 1), f.dir.path() / "again" / "muse" / "seed1", fs::copy_options::recursive);
  const auto two = run_attn("report" + f.dir_args() + " " + (f.dir.path() / "again" / "muse" / "seed1").string() +
                            " --baseline cmp/transformer --json");
  REQUIRE(two.status == 0);
  const json groups = json::parse(two.out)["comparison"]["archs"];
  REQUIRE(groups.size() == 3);
  CHECK(groups[0]["arch"] == "cmp/transformer");
  CHECK(groups[1]["arch"] == "cmp/muse");
  CHECK(groups[2]["arch"] == "again/muse");
  CHECK(groups[2]["seeds"] == json::array({1}));
  // Two comparisons in folders of the same name cannot be told apart.
  fs::create_directories(f.dir.path() / "x" / "cmp" / "muse");
  fs::copy(f.run("muse", 1), f.dir.path() / "x" / "cmp" / "muse" / "seed1", fs::copy_options::recursive);
  require_user_error(run_attn("report" + f.dir_args() + " " + (f.dir.path() / "x" / "cmp" / "muse" / "seed1").string() +
                              " --json"),
                     "are both seed 1 of muse");
}

TEST_CASE("report comparison (cli): headless chromium draws the arch table and a line per arch in the length charts",
          "[report][cli][browser][e2e]") {
  if (!fs::exists(test::kChromium)) {
    ATTN_SKIP("chromium is not installed (apt-get install chromium)");
  }
  Fixture f;
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const fs::path out_dir = fs::absolute(fs::path(bin).parent_path() / "test-output" / "report");
  fs::create_directories(out_dir);
  const fs::path page = out_dir / "comparison.html";
  const auto r = run_attn("report" + f.dir_args() + " --refs " + (f.out / "refs").string() + " -o " + page.string());
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);

  std::string dom;
  const std::string seen = test::probe_page(
      f.dir.path(), page,
      "  const out = [];\n"
      "  document.querySelectorAll('figure.plot').forEach((f) => {\n"
      "    const drawn = Array.from(f.querySelectorAll('polyline.curve')).filter((p) => p.getTotalLength() > 0 &&\n"
      "      p.getBoundingClientRect().width > 0);\n"
      "    out.push(f.dataset.plot + ':' + drawn.map((p) => p.dataset.arch || p.dataset.run).join('+'));\n"
      "  });\n"
      "  const rows = Array.from(document.querySelectorAll('#archs tbody tr.arch'))\n"
      "    .filter((r) => r.getBoundingClientRect().height > 0);\n"
      "  out.push('archs:' + rows.map((r) => r.dataset.arch).join('+'));\n"
      "  document.body.setAttribute('data-probe', out.join(' '));\n",
      dom);
  INFO("probe: " << seen);
  REQUIRE(seen.find("archs:transformer+muse") != std::string::npos);
  REQUIRE(seen.find("bleu-by-length:transformer+muse ") != std::string::npos);
  REQUIRE(seen.find("bleu-by-k:transformer+muse ") != std::string::npos);
  // The per-run curves stay, one per seed run.
  REQUIRE(
      seen.find(
          "train-loss-updates:muse/seed1+muse/seed2+muse/seed3+transformer/seed1+transformer/seed2+transformer/seed3") !=
      std::string::npos);

  test::screenshot(f.dir.path(), page, out_dir / "comparison.png");
}
