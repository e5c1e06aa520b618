#include "attn/report/verdict_rule.h"

#include "attn/core/format.h"

namespace attn::report {

namespace {

std::string level(double alpha) { return "Holm p < " + format_number(alpha); }

// Which of the two tests do something, in words: "both tests reject", "neither test rejects", ...
std::string which(bool pooled, bool seed, const std::string& verb) {
  if (pooled && seed) return "both tests " + verb;
  const std::string verbs = verb + (verb.ends_with("ch") ? "es" : "s");  // one test reaches, rejects
  if (!pooled && !seed) return "neither test " + verbs;
  return std::string("only ") + (pooled ? "the pooled test " : "the seed-level test ") + verbs;
}

// "; there is no seed-level test" when one of the two could not be run.
std::string missing(bool pooled_present, bool seed_present) {
  if (!seed_present) return "; there is no seed-level test";
  if (!pooled_present) return "; there is no pooled test";
  return "";
}

std::string higher_or_lower(int d) { return d > 0 ? "higher" : "lower"; }

// "A better" / "B better", or for slopes which falls less with k; for
// attention statistics which side is higher (their slope: rises more).
std::string better(const Claim& c, int d) {
  if (c.statistic()) return (d > 0 ? c.a_side() : c.b_side()) + (c.slope ? " rises more with k" : " higher");
  const std::string& winner = d > 0 ? c.a : c.b;
  return c.slope ? winner + " falls less with k" : winner + " better";
}

std::string difference_rule(int dp, int ds, bool pooled_present, bool seed_present, double alpha) {
  if (dp != 0 && dp == ds) return "both tests find A − B " + higher_or_lower(dp) + " at " + level(alpha);
  if (dp != 0 && ds != 0)
    return "the tests disagree (pooled " + higher_or_lower(dp) + ", seed-level " + higher_or_lower(ds) + ")";
  if (dp == 0 && ds == 0) return "neither test reaches " + level(alpha);
  const std::string found = higher_or_lower(dp != 0 ? dp : ds);
  return which(dp != 0, ds != 0, "reach") + " " + level(alpha) + " (" + found + ")" +
         ((dp != 0 ? seed_present : pooled_present) ? "; the other does not" : missing(pooled_present, seed_present));
}

}  // namespace

int direction(const TestOutcome& test, double alpha) {
  if (!test.present || test.difference == 0.0 || test.p_holm >= alpha) return 0;
  return test.difference > 0.0 ? 1 : -1;
}

Decision decide(const Claim& c, const TestOutcome& pooled, const TestOutcome& seed, double alpha) {
  if (!pooled.present && !seed.present) return {"not measured", "neither test could be run"};
  const int dp = direction(pooled, alpha), ds = direction(seed, alpha);
  const std::string difference = difference_rule(dp, ds, pooled.present, seed.present, alpha);
  if (!c.equivalence()) {
    if (dp != 0 && dp == ds) return {dp == c.sign ? "holds" : "does not hold", difference};
    return {"not distinguishable", difference};
  }
  const auto equivalent = [&](const TestOutcome& t) {
    return t.present && t.equivalence_p_holm && *t.equivalence_p_holm < alpha;
  };
  const bool ep = equivalent(pooled), es = equivalent(seed);
  const std::string margin = "±" + format_number(*c.margin);
  const std::string tost = which(ep, es, "reject") + " a difference of " + format_number(*c.margin) + " or more at " +
                           level(alpha) + missing(pooled.present, seed.present);
  if (ep && es) {
    if (dp != 0 && dp == ds)
      return {"equivalent within " + margin + " (" + better(c, dp) + ", by less than " + format_number(*c.margin) + ")",
              "equivalence: " + tost + "; difference: " + difference};
    return {"equivalent within " + margin, "equivalence: " + tost + "; difference: " + difference};
  }
  if (dp != 0 && dp == ds) return {better(c, dp), "difference: " + difference + "; equivalence: " + tost};
  return {"not distinguishable", "equivalence: " + tost + "; difference: " + difference};
}

}  // namespace attn::report
