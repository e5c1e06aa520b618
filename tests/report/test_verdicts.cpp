// attn report --claims: the claims file, the one rule, the slope's sentence
// groups, equivalence claims end to end, the CLI's outputs and errors, and —
// on a small committed fixture (tests/report/verdicts_fixture, made by
// dev/make_verdicts_fixture.py; no corpus) — the very numbers
// experiments/compare_verdicts.py printed on it at commit 2869c72
// (verdicts_fixture/compare_verdicts.md), before the rule moved into attn.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "attn/core/error.h"
#include "attn/eval/corpus_metric.h"
#include "attn/eval/numpy_random.h"
#include "attn/eval/paired_t.h"
#include "attn/report/claims.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/slope_bootstrap.h"
#include "attn/report/verdict_rule.h"
#include "attn/report/verdicts.h"

using namespace attn;
using attn::test::require_user_error;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kFixture = fs::path(__FILE__).parent_path() / "verdicts_fixture";

std::vector<fs::path> seed_dirs(const std::vector<std::string>& comparisons) {
  std::vector<fs::path> dirs;
  for (const std::string& c : comparisons)
    for (const auto& arch : fs::directory_iterator(kFixture / c))
      for (const auto& seed : fs::directory_iterator(arch.path())) dirs.push_back(seed.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

report::Verdicts judge(const std::vector<std::string>& comparisons, const std::string& claims_text) {
  report::ComparisonOptions options;
  options.refs = kFixture / "refs";
  const report::Comparison c = report::compare_seed_runs(report::read_runs(seed_dirs(comparisons)), options);
  return report::judge_claims(report::parse_claims(claims_text, "test.claims"), c);
}

std::string args(const std::vector<std::string>& comparisons) {
  std::string a;
  for (const fs::path& d : seed_dirs(comparisons)) a += " " + d.string();
  return a + " --refs " + (kFixture / "refs").string();
}

// One verdict line of compare_verdicts.py: its numbers as printed.
struct OldLine {
  std::string verdict;
  bool measured = false;
  double delta = 0.0, pooled_p = 0.0, pooled_holm = 0.0, t = 0.0, p = 0.0, holm = 0.0;
  std::vector<double> per_seed;
  std::optional<double> pooled_difference;  // the slope line prints it
};

std::vector<OldLine> old_lines(const std::string& section) {
  const std::string text = test::slurp(kFixture / "compare_verdicts.md");
  const std::size_t long_at = text.find("### The long comparison");
  REQUIRE(long_at != std::string::npos);
  const std::string part = section == "single" ? text.substr(0, long_at) : text.substr(long_at);
  const std::string num = R"(([-+]?\d+\.\d+(?:e-?\d+)?))";
  const std::regex line_re(R"(^- (.*)$)"), verdict_re(R"(\*\*(.*?)\*\*)");
  const std::regex bleu_re("= " + num + R"( BLEU; per seed (.*?); pooled)");
  const std::regex slope_re(R"(muse − transformer (.*?) \(mean )" + num + R"(\).*pooled BLEU \()" + num + R"(\))");
  const std::regex pooled_re(R"(p = )" + num + R"( \(Holm )" + num + R"(\); paired t)");
  const std::regex t_re(R"(t\(2\) = )" + num + R"(, p = )" + num + R"( \(Holm )" + num + R"(\))");
  const std::regex seed_re(R"(([-+]\d+\.\d+))");
  std::vector<OldLine> out;
  std::smatch m;
  std::istringstream in(part);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("- ") || line.find("**") == std::string::npos || line.find("memory") != std::string::npos)
      continue;
    OldLine o;
    REQUIRE(std::regex_search(line, m, verdict_re));
    o.verdict = m[1];
    if (o.verdict == "not measured") {
      out.push_back(o);
      continue;
    }
    o.measured = true;
    std::string seeds;
    if (std::regex_search(line, m, bleu_re)) {
      o.delta = std::stod(m[1]);
      seeds = std::regex_replace(std::string(m[2]), std::regex(R"( \(p [\d.e-]+\))"), "");
    } else {
      REQUIRE(std::regex_search(line, m, slope_re));
      seeds = m[1];
      o.delta = std::stod(m[2]);
      o.pooled_difference = std::stod(m[3]);
    }
    for (std::sregex_iterator it(seeds.begin(), seeds.end(), seed_re), end; it != end; ++it)
      o.per_seed.push_back(std::stod((*it)[1]));
    REQUIRE(std::regex_search(line, m, pooled_re));
    o.pooled_p = std::stod(m[1]);
    o.pooled_holm = std::stod(m[2]);
    REQUIRE(std::regex_search(line, m, t_re));
    o.t = std::stod(m[1]);
    o.p = std::stod(m[2]);
    o.holm = std::stod(m[3]);
    out.push_back(o);
  }
  return out;
}

// A value equals what was printed with `decimals` decimals.
bool printed_as(double value, double printed, int decimals) {
  return std::abs(value - printed) <= 0.5 * std::pow(10.0, -decimals) + 1e-12;
}

// A p-value as compare_verdicts.py printed it: 3 decimals, or "%.1e" below 0.0005.
bool p_printed_as(double p, double printed) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, p >= 0.0005 ? "%.3f" : "%.1e", p);
  return std::stod(buffer) == printed;
}

void require_same_numbers(const std::vector<OldLine>& old, const report::Verdicts& v) {
  REQUIRE(old.size() == v.claims.size());
  for (std::size_t i = 0; i < old.size(); ++i) {
    const OldLine& o = old[i];
    const report::ClaimVerdict& c = v.claims[i];
    INFO("line " << c.claim.line << ": " << c.claim.text);
    if (!o.measured) {
      CHECK(c.decision.verdict == "not measured");
      continue;
    }
    REQUIRE(c.pooled);
    REQUIRE(c.seed);
    CHECK(printed_as(c.mean_difference, o.delta, 2));
    REQUIRE(c.differences.size() == o.per_seed.size());
    for (std::size_t s = 0; s < o.per_seed.size(); ++s) CHECK(printed_as(c.differences[s], o.per_seed[s], 2));
    if (o.pooled_difference) CHECK(printed_as(c.pooled->difference, *o.pooled_difference, 2));
    CHECK(p_printed_as(c.pooled->p, o.pooled_p));
    CHECK(p_printed_as(*c.pooled->p_holm, o.pooled_holm));
    CHECK(printed_as(c.seed->t.t, o.t, 2));
    CHECK(p_printed_as(c.seed->t.p, o.p));
    CHECK(p_printed_as(*c.seed->p_holm, o.holm));
    // The words: the same, but for the old "as good as" lines, which said "holds (not distinguishable)" on silence.
    if (o.verdict == "holds (not distinguishable)")
      CHECK(c.decision.verdict == "not distinguishable");
    else
      CHECK(c.decision.verdict == o.verdict);
  }
}

report::TestOutcome outcome(double difference, double p_holm, std::optional<double> equivalence_p_holm = {}) {
  return {true, difference, p_holm, equivalence_p_holm};
}

}  // namespace

TEST_CASE("verdicts: the claims file's forms, labels, alpha and errors (file:line)", "[verdicts][report]") {
  const report::ClaimsFile f = report::parse_claims("# a comment\n"
                                                    "\n"
                                                    "muse beats transformer on test2016 | MUSE beats the Transformer\n"
                                                    "  fastdisa within ±0.5 of transformer on test2016 avg5\n"
                                                    "cmp-long/muse slope above cmp-long/transformer on test2016\n"
                                                    "a slope below b on t\n"
                                                    "a slope within +-0.25 of b on t best | same slope | really\n"
                                                    "alpha 0.01\n",
                                                    "x.claims");
  CHECK(f.alpha == 0.01);
  REQUIRE(f.claims.size() == 5);
  CHECK(f.claims[0].line == 3);
  CHECK(f.claims[0].a == "muse");
  CHECK(f.claims[0].b == "transformer");
  CHECK(f.claims[0].set == "test2016");
  CHECK(f.claims[0].model == "best");
  CHECK(f.claims[0].sign == 1);
  CHECK(f.claims[0].label == "MUSE beats the Transformer");
  CHECK(f.claims[0].text == "muse beats transformer on test2016");
  CHECK_FALSE(f.claims[0].equivalence());
  CHECK(f.claims[1].margin == 0.5);
  CHECK(f.claims[1].model == "avg5");
  CHECK(f.claims[1].title() == "fastdisa within ±0.5 of transformer on test2016 avg5");
  CHECK((f.claims[2].slope && f.claims[2].sign == 1 && f.claims[2].a == "cmp-long/muse"));
  CHECK((f.claims[3].slope && f.claims[3].sign == -1));
  CHECK((f.claims[4].slope && f.claims[4].margin == 0.25 && f.claims[4].label == "same slope | really"));

  CHECK_THROWS_WITH(report::parse_claims("a beats b on t\na beat b on t\n", "x.claims"),
                    Catch::Contains("x.claims:2: unknown relation 'beat'"));
  CHECK_THROWS_WITH(report::parse_claims("a within 0 of b on t\n", "x.claims"),
                    Catch::Contains("x.claims:1: the margin '0' is not a positive number"));
  CHECK_THROWS_WITH(report::parse_claims("a within x of b on t\n", "x.claims"),
                    Catch::Contains("the margin 'x' is not a positive number"));
  CHECK_THROWS_WITH(report::parse_claims("a beats b t\n", "x.claims"), Catch::Contains("expected 'on' at 't'"));
  CHECK_THROWS_WITH(report::parse_claims("a beats b on\n", "x.claims"),
                    Catch::Contains("the claim ends before its test set"));
  CHECK_THROWS_WITH(report::parse_claims("a beats b on t best extra\n", "x.claims"),
                    Catch::Contains("unexpected 'extra' after the model"));
  CHECK_THROWS_WITH(report::parse_claims("a slope beats b on t\n", "x.claims"),
                    Catch::Contains("unknown relation 'beats'"));
  CHECK_THROWS_WITH(report::parse_claims("a beats a on t\n", "x.claims"), Catch::Contains("two different run groups"));
  CHECK_THROWS_WITH(report::parse_claims("alpha 2\na beats b on t\n", "x.claims"),
                    Catch::Contains("x.claims:1: 'alpha P' takes one level strictly between 0 and 1"));
  CHECK_THROWS_WITH(report::parse_claims("# nothing\n", "x.claims"), Catch::Contains("x.claims: no claims in it"));
  CHECK_THROWS_WITH(report::parse_claims("| label only\n", "x.claims"), Catch::Contains("a label without a claim"));
}

TEST_CASE("verdicts: the rule — both tests must agree after Holm; TOST for equivalence", "[verdicts][report]") {
  report::Claim beats;
  beats.a = "x";
  beats.b = "y";
  beats.sign = 1;
  using report::decide;
  CHECK(decide(beats, outcome(1.2, 0.01), outcome(1.0, 0.02), 0.05).verdict == "holds");
  CHECK(decide(beats, outcome(-1.2, 0.01), outcome(-1.0, 0.02), 0.05).verdict == "does not hold");
  for (const auto& [pooled, seed, why] :
       {std::tuple{outcome(1.0, 0.3), outcome(1.0, 0.4), "neither test"},
        std::tuple{outcome(1.0, 0.001), outcome(1.0, 0.2), "only the pooled test"},
        std::tuple{outcome(1.0, 0.3), outcome(1.0, 0.01), "only the seed-level test"},
        std::tuple{outcome(1.0, 0.001), outcome(-1.0, 0.01), "disagree"},
        std::tuple{outcome(1.0, 0.05), outcome(1.0, 0.049), "only the seed-level test"},
        std::tuple{outcome(0.0, 0.001), outcome(0.0, 0.001), "neither test"}}) {
    const report::Decision d = decide(beats, pooled, seed, 0.05);
    INFO(d.rule);
    CHECK(d.verdict == "not distinguishable");
    CHECK(d.rule.find(why) != std::string::npos);
  }
  const report::Decision no_seed = decide(beats, outcome(1.0, 0.001), {}, 0.05);
  CHECK(no_seed.verdict == "not distinguishable");
  CHECK(no_seed.rule.ends_with("(higher); there is no seed-level test"));
  CHECK(decide(beats, {}, {}, 0.05).verdict == "not measured");
  report::Claim below = beats;
  below.slope = true;
  below.sign = -1;
  CHECK(decide(below, outcome(-0.5, 0.01), outcome(-0.4, 0.01), 0.05).verdict == "holds");
  CHECK(decide(below, outcome(-0.5, 0.01), outcome(-0.4, 0.01), 0.01).verdict == "not distinguishable");

  report::Claim same = beats;
  same.sign = 0;
  same.margin = 0.5;
  // Equivalence needs both TOSTs; a difference needs both difference tests; silence is neither.
  CHECK(decide(same, outcome(0.1, 0.8, 0.01), outcome(0.1, 0.9, 0.02), 0.05).verdict == "equivalent within ±0.5");
  CHECK(decide(same, outcome(0.3, 0.01, 0.01), outcome(0.3, 0.02, 0.02), 0.05).verdict ==
        "equivalent within ±0.5 (x better, by less than 0.5)");
  CHECK(decide(same, outcome(-1.0, 0.01, 0.9), outcome(-1.0, 0.02, 0.8), 0.05).verdict == "y better");
  const report::Decision silent = decide(same, outcome(0.1, 0.6, 0.2), outcome(0.1, 0.7, 0.3), 0.05);
  CHECK(silent.verdict == "not distinguishable");
  CHECK(silent.rule.find("equivalence: neither test rejects a difference of 0.5 or more") != std::string::npos);
  CHECK(decide(same, outcome(0.1, 0.6, 0.01), outcome(0.1, 0.7, 0.3), 0.05).verdict == "not distinguishable");
  CHECK(decide(same, outcome(0.1, 0.6, 0.01), {}, 0.05).verdict == "not distinguishable");  // one test is not both
  report::Claim flat = same;
  flat.slope = true;
  CHECK(decide(flat, outcome(0.4, 0.01, 0.9), outcome(0.4, 0.01, 0.9), 0.05).verdict == "x falls less with k");
}

TEST_CASE("verdicts: slope groups hold whole probe lines; equal outputs differ by 0", "[verdicts][report]") {
  // Line i of ×k holds sentences k·i … k·i + k − 1: with groups of 24, ×8 lines 0–2 are group 0 and line 3 group 1.
  eval::SegmentStats lines;
  for (int i = 0; i < 4; ++i) lines.append(std::vector<double>{1, 2, 3});
  const eval::SegmentStats g = report::group_rows(lines, 8, 24, 2);
  CHECK(g.values == std::vector<double>{3, 6, 9, 1, 2, 3});
  CHECK_THROWS_AS(report::group_rows(lines, 5, 24, 2), Error);  // 24 is no multiple of 5
  CHECK_THROWS_AS(report::group_rows(lines, 8, 24, 1), Error);  // line 3 falls past group 0

  // The fixture's own runs as both groups: the slope difference is 0 on every resample.
  report::ComparisonOptions options;
  options.refs = kFixture / "refs";
  const report::Comparison c = report::compare_seed_runs(report::read_runs(seed_dirs({"long"})), options);
  const report::ArchSummary& muse =
      *std::find_if(c.archs.begin(), c.archs.end(), [](const auto& a) { return a.arch == "muse"; });
  report::GroupedCorpus corpus;
  for (const std::string& set : c.sets) {
    const int k = report::joined_sentences(set);
    corpus.ks.push_back(k);
    corpus.per_k.push_back(report::group_rows(*muse.outputs.at({set, "best"}).seeds[0].bleu_stats, k, 24, 5));
  }
  const report::SlopeBootstrap same = report::slope_bootstrap(corpus, corpus, eval::bleu_metric({}).score, 50, 1);
  CHECK(same.difference == 0.0);
  for (double d : same.resampled) CHECK(d == 0.0);
  CHECK(same.a_slope < 0.0);  // the fixture's output shortens with k
}

TEST_CASE("verdicts: on the committed fixture, the numbers compare_verdicts.py printed", "[verdicts][report]") {
  // The single-sentence family: muse-simple, muse-separate and the convsan lines have no runs here.
  require_same_numbers(old_lines("single"), judge({"single"}, test::slurp(kFixture / "single.claims")));
  // The long family, both comparisons given at once: the groups are long/<arch> and single/<arch>.
  const report::Verdicts v = judge({"single", "long"}, test::slurp(kFixture / "long.claims"));
  require_same_numbers(old_lines("long"), v);
  CHECK(v.claims[0].ks == std::vector<int>{1, 2, 4, 6, 8});
  CHECK(v.claims[0].pooled->what.find("5 groups of 24") != std::string::npos);
}

TEST_CASE("verdicts: from the runs' segments/ without --refs, the same verdicts as from their translations",
          "[verdicts][report][cli]") {
  // The fixture copied, each translation replaced by attn score --segments of it, as an archive keeps it.
  test::ScratchDir dir;
  const fs::path copy = dir.path() / "fixture";
  fs::copy(kFixture, copy, fs::copy_options::recursive);
  std::vector<fs::path> runs;
  for (const std::string c : {"single", "long"})
    for (const auto& arch : fs::directory_iterator(copy / c))
      for (const auto& seed : fs::directory_iterator(arch.path())) runs.push_back(seed.path());
  std::sort(runs.begin(), runs.end());
  for (const fs::path& run : runs) {
    for (const auto& hyp : fs::directory_iterator(run / "hyp")) {
      const std::string stem = hyp.path().stem().string();  // test2016.join4.best
      const fs::path ref = copy / "refs" / (stem.substr(0, stem.rfind('.')) + ".en");
      fs::create_directories(run / "segments");
      const auto r = run_attn("score --ref " + ref.string() + " -i " + hyp.path().string() + " --segments " +
                              (run / "segments" / (stem + ".tsv")).string());
      REQUIRE(r.status == 0);
    }
    fs::remove_all(run / "hyp");
  }
  const std::string claims = test::slurp(kFixture / "long.claims");
  const report::Comparison c = report::compare_seed_runs(report::read_runs(runs), report::ComparisonOptions{});
  const std::string from_segments =
      report::verdicts_markdown(report::judge_claims(report::parse_claims(claims, "test.claims"), c));
  const std::string from_text = report::verdicts_markdown(judge({"single", "long"}, claims));
  CHECK(from_segments.find("not distinguishable") != std::string::npos);
  REQUIRE(from_segments.substr(from_segments.find('\n')) == from_text.substr(from_text.find('\n')));
}

TEST_CASE("verdicts: equivalence claims end to end — TOST over seeds and on the pooled resamples",
          "[verdicts][report]") {
  const report::Verdicts v = judge({"single", "long"}, "long/muse within 20 of single/muse on test2016\n"
                                                       "long/transformer within 1 of single/transformer on test2016\n"
                                                       "long/muse slope within 0.25 of long/transformer on test2016\n"
                                                       "long/muse beats long/transformer on test2016.join2\n");
  REQUIRE(v.claims.size() == 4);
  // Four difference tests and three TOSTs of each kind: Holm over seven.
  CHECK(v.pooled_family == 7);
  CHECK(v.seed_family == 7);
  const report::ClaimVerdict& wide = v.claims[0];
  REQUIRE(wide.seed);
  REQUIRE(wide.seed->equivalence);
  const std::optional<eval::Equivalence> direct = eval::paired_t_equivalence(wide.differences, 20.0);
  CHECK(wide.seed->equivalence->p_lower == direct->p_lower);
  CHECK(wide.seed->equivalence->p_upper == direct->p_upper);
  // The pooled TOST counts the paired bootstrap's own resamples (NumPy's draws) beyond ±20: none.
  CHECK(wide.pooled->equivalence->p() == Approx(1.0 / 1001.0).epsilon(1e-12));
  CHECK(wide.decision.verdict == "equivalent within ±20");
  // Joining costs the fixture's Transformer 7.6 BLEU: far outside ±1, but the seed-level test does not confirm
  // the difference after Holm over seven: not distinguishable, and never "equivalent".
  CHECK(v.claims[1].mean_difference < -5.0);
  CHECK(v.claims[1].seed->equivalence->p() > 0.5);
  CHECK(v.claims[1].decision.verdict == "not distinguishable");
  CHECK(v.claims[1].decision.rule.find("equivalence: neither test rejects a difference of 1 or more") == 0);
  // The slope TOST: its pooled resamples are the slope bootstrap's; −0.43 per k is outside ±0.25.
  REQUIRE(v.claims[2].pooled->equivalence);
  CHECK(v.claims[2].pooled->equivalence->p() > 0.5);
  CHECK(v.claims[2].decision.verdict == "not distinguishable");
  CHECK(v.claims[3].decision.verdict == "holds");
  // Holm: every adjusted p is at least its raw p.
  for (const report::ClaimVerdict& c : v.claims) {
    CHECK(*c.seed->p_holm >= c.seed->t.p);
    CHECK(*c.pooled->p_holm >= c.pooled->p);
  }
  // An unknown group is "not measured", with the groups there are.
  const report::Verdicts missing = judge({"long"}, "nope beats muse on test2016\n");
  CHECK(missing.claims[0].decision.verdict == "not measured");
  CHECK(missing.claims[0].absent.find("no seed runs named nope (the runs' groups: ") != std::string::npos);
  CHECK(missing.pooled_family == 0);
}

TEST_CASE("verdicts (cli): --claims prints Markdown, --json carries them, -o the page; errors are one line",
          "[verdicts][report][cli][e2e]") {
  test::ScratchDir dir;
  const fs::path claims = dir.path() / "x.claims";
  {
    std::ofstream(claims) << "muse beats transformer on test2016 | MUSE beats the Transformer\n"
                             "fastdisa within 0.5 of transformer on test2016\n";
  }
  const std::string runs = args({"single"});
  const auto md = run_attn("report" + runs + " --claims " + claims.string());
  INFO("stderr: " << md.err);
  REQUIRE(md.status == 0);
  CHECK(md.out.starts_with("Verdicts of " + claims.string()));
  CHECK(md.out.find("| MUSE beats the Transformer (muse beats transformer on test2016) | +5.55 |") !=
        std::string::npos);
  CHECK_FALSE(fs::exists("report.html"));  // --claims alone prints only

  const fs::path page = dir.path() / "r.html", note = dir.path() / "v.md";
  const auto j = run_attn("report" + runs + " --claims " + claims.string() + " --json -o " + page.string() +
                          " --markdown " + note.string());
  REQUIRE(j.status == 0);
  const json verdicts = json::parse(j.out)["verdicts"];
  REQUIRE(verdicts["claims"].size() == 2);
  CHECK(verdicts["claims"][0]["verdict"] == "not distinguishable");
  CHECK(verdicts["claims"][1]["kind"] == "equivalence");
  CHECK(verdicts["claims"][1]["seed_level"]["equivalence"]["p_holm"].is_number());
  CHECK(verdicts["family"]["seed_level"] == 3);
  CHECK(test::slurp(note) == md.out);
  const std::string html = test::slurp(page);
  CHECK(html.find("<section class=\"card\" id=\"verdicts\">") != std::string::npos);
  CHECK(test::count_occurrences(html, "<tr class=\"claim\"") == 2);

  // Bad claims: one line naming file and line, exit 2, nothing written.
  const fs::path bad = dir.path() / "bad.claims", page2 = dir.path() / "bad.html";
  { std::ofstream(bad) << "muse beats transformer on test2016\nmuse is better than transformer\n"; }
  require_user_error(run_attn("report" + runs + " --claims " + bad.string() + " -o " + page2.string()),
                     bad.string() + ":2: unknown relation 'is'");
  CHECK_FALSE(fs::exists(page2));
  require_user_error(run_attn("report" + runs + " --claims " + (dir.path() / "none.claims").string()),
                     "none.claims: cannot be read");
  require_user_error(run_attn("report" + runs + " --markdown " + note.string()), "--markdown writes the verdicts");
  require_user_error(run_attn("report" + runs + " --claims " + claims.string() + " -o -"),
                     "both write to standard output");
  require_user_error(run_attn("report" + runs + " --claims " + claims.string() + " --json --markdown -"),
                     "both write to standard output");
}
