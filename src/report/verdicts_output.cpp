// The verdicts as JSON, as Markdown (for docs and terminals) and as the
// page's section: the same numbers, rounded only where printed.
#include <cmath>
#include <cstdio>
#include <set>

#include "attn/core/format.h"
#include "attn/eval/student_t.h"
#include "attn/report/verdicts.h"
#include "attn/text/html.h"

namespace attn::report {

namespace {

using nlohmann::json;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json equivalence_json(const std::optional<eval::Equivalence>& e, const std::optional<double>& p_holm) {
  if (!e) return nullptr;
  return {{"p_lower", e->p_lower}, {"p_upper", e->p_upper}, {"p", e->p()}, {"p_holm", optional_json(p_holm)}};
}

// p as the verdict lines print it: 3 decimals, or 2 significant digits below 0.0005.
std::string p_text(double p) {
  if (p >= 0.0005) return format_fixed(p, 3);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", p);
  return buffer;
}

// BLEU to 2 decimals; attention statistics, fractions of 1 mostly, to 4.
int digits(const Claim& c) { return c.statistic() ? 4 : 2; }

std::string signed_text(double v, int decimals = 2) { return (v >= 0.0 ? "+" : "") + format_fixed(v, decimals); }

std::string p_holm_text(double p, const std::optional<double>& holm) {
  return p_text(p) + " (" + (holm ? p_text(*holm) : std::string("—")) + ")";
}

std::string list(const std::vector<double>& values, int decimals = 2) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ", ") + signed_text(v, decimals);
  return out;
}

// Scores (BLEU, statistics) without a sign; slopes keep theirs.
std::string values(const std::vector<double>& v, bool slope, int decimals = 2) {
  if (slope) return list(v, decimals);
  std::string out;
  for (double x : v) out += (out.empty() ? "" : ", ") + format_fixed(x, decimals);
  return out;
}

std::string seed_list(const std::vector<int>& seeds) {
  std::string out;
  for (int s : seeds) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

std::string t_text(const SeedTest& s) {
  return "t(" + format_number(s.t.df) +
         ") = " + (std::isinf(s.t.t) ? std::string(s.t.t > 0 ? "+inf" : "-inf") : format_fixed(s.t.t, 2));
}

std::string unit(const Claim& c) {
  const std::string what = c.statistic() ? c.stat->statistic : "BLEU";
  return c.slope ? what + " per unit of k" : what;
}

// The columns of one claim (Markdown and HTML share them): Δ, per seed, pooled, seeds, equivalence.
struct Cells {
  std::string delta, per_seed, pooled, seed, equivalence;
};

Cells cells(const ClaimVerdict& v) {
  Cells c;
  const std::string none = "—";
  if (!v.absent.empty()) return {none, none, none, none, none};
  const int d = digits(v.claim);
  c.delta = signed_text(v.mean_difference, d);
  c.per_seed = list(v.differences, d);
  c.pooled = v.pooled ? signed_text(v.pooled->difference, d) + ", " + p_holm_text(v.pooled->p, v.pooled->p_holm) : none;
  c.seed = v.seed ? t_text(*v.seed) + ", " + p_holm_text(v.seed->t.p, v.seed->p_holm) : none;
  if (v.claim.equivalence()) {
    const auto part = [&](const auto& test) {
      return test && test->equivalence ? p_holm_text(test->equivalence->p(), test->equivalence_p_holm) : none;
    };
    c.equivalence = "±" + format_number(*v.claim.margin) + ": " + part(v.pooled) + " / " + part(v.seed);
  } else {
    c.equivalence = none;
  }
  return c;
}

// What the seed-level test needs with this family: the |t| whose two-sided p is α / m.
std::string seed_bar(const Verdicts& verdicts) {
  std::set<double> dfs;
  for (const ClaimVerdict& v : verdicts.claims)
    if (v.seed) dfs.insert(v.seed->t.df);
  if (dfs.empty() || verdicts.seed_family == 0) return "";
  std::string bars;
  const double share = verdicts.alpha / static_cast<double>(verdicts.seed_family);
  for (double df : dfs)
    bars += std::string(bars.empty() ? "" : "; ") + format_number(df + 1) + " seeds (t with " + format_number(df) +
            " df) |t| > " + format_fixed(eval::student_t_quantile(1.0 - share / 2.0, df), 1);
  return " The smallest of the " + std::to_string(verdicts.seed_family) + " seed-level p-values reaches Holm p < " +
         format_number(verdicts.alpha) + " only at: " + bars + ".";
}

std::string rule_text(const Verdicts& v) {
  const std::string a = format_number(v.alpha);
  return "Each claim is tested twice: by the pooled seed-matched paired bootstrap (" + std::to_string(v.samples) +
         " resamples; the test sentences' variance) and by the paired t over seeds (the training runs' variance); "
         "an equivalence claim adds two one-sided tests (TOST) of each kind against its margin. Every p is "
         "Holm-corrected over the file's p-values of its kind (pooled: " +
         std::to_string(v.pooled_family) + ", seed-level: " + std::to_string(v.seed_family) +
         "). A direction claim holds when both tests find its direction at Holm p < " + a +
         ", does not hold when both find the opposite, and is otherwise not distinguishable. An equivalence claim "
         "is equivalent within its margin when both TOSTs reject a difference of at least the margin at Holm p < " +
         a + "; else A or B is better when both difference tests find that direction; else not distinguishable." +
         seed_bar(v);
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

// One line of details: the numbers behind the row and which part of the rule fired.
std::string details(const ClaimVerdict& v) {
  const Claim& c = v.claim;
  std::string out = c.text + ": ";
  if (!v.absent.empty()) return out + "not measured (" + v.absent + ")";
  const int d = digits(c);
  if (c.slope) {
    std::string ks;
    for (int k : v.ks) ks += (ks.empty() ? "" : ", ") + std::to_string(k);
    out += "k = " + ks + "; slope in " + unit(c) + ", seeds " + seed_list(v.seeds) + ": " + c.a_side() + " " +
           list(v.a_values, d) + "; " + c.b_side() + " " + list(v.b_values, d) + "; ";
  } else {
    out += unit(c) + ", seeds " + seed_list(v.seeds) + ": " + c.a_side() + " " + values(v.a_values, false, d) + "; " +
           c.b_side() + " " + values(v.b_values, false, d) + "; ";
  }
  out += "A − B " + list(v.differences, d) + " (mean " + signed_text(v.mean_difference, d) + ")";
  if (!v.p_per_seed.empty()) {
    std::string ps;
    for (double p : v.p_per_seed) ps += (ps.empty() ? "" : ", ") + p_text(p);
    out += ", each seed's own p " + ps;
  }
  if (v.pooled)
    out += "; pooled: " + v.pooled->what + ", " + c.a_side() + " " + format_fixed(v.pooled->a_value, d) + ", " +
           c.b_side() + " " + format_fixed(v.pooled->b_value, d);
  if (v.seed) out += "; seed-level sd " + format_fixed(v.seed->t.sd, d);
  for (const std::string& n : v.notes) out += "; " + n;
  return out + "; rule: " + v.decision.rule;
}

}  // namespace

json verdicts_json(const Verdicts& verdicts) {
  json claims = json::array();
  for (const ClaimVerdict& v : verdicts.claims) {
    const Claim& c = v.claim;
    json j = {{"line", c.line},
              {"claim", c.text},
              {"label", c.label},
              {"kind", c.equivalence() ? "equivalence" : "direction"},
              {"of", c.statistic() ? (c.slope ? "statistic_slope" : "statistic") : (c.slope ? "slope" : "bleu")},
              {"a", c.a},
              {"b", c.b},
              {"set", c.set},
              {"model", c.model},
              {"sign", c.sign},
              {"margin", c.margin ? json(*c.margin) : json(nullptr)},
              {"verdict", v.decision.verdict},
              {"rule", v.decision.rule},
              {"absent", v.absent.empty() ? json(nullptr) : json(v.absent)},
              {"notes", v.notes}};
    if (c.statistic()) {
      j["statistic"] = {{"component", c.stat->component}, {"layer", c.stat->layer}, {"name", c.stat->statistic}};
      j["b_layer"] = c.b_layer.empty() ? json(nullptr) : json(c.b_layer);
      j["constant"] = c.constant ? json(*c.constant) : json(nullptr);
    }
    j["seeds"] = v.seeds;
    j["a_values"] = v.a_values;
    j["b_values"] = v.b_values;
    j["differences"] = v.differences;
    j["p_per_seed"] = v.p_per_seed;
    if (c.slope) j["ks"] = v.ks;
    j["mean_difference"] = v.absent.empty() ? json(v.mean_difference) : json(nullptr);
    if (v.pooled)
      j["pooled"] = {{"what", v.pooled->what},
                     {"a", v.pooled->a_value},
                     {"b", v.pooled->b_value},
                     {"difference", v.pooled->difference},
                     {"p", v.pooled->p},
                     {"p_holm", optional_json(v.pooled->p_holm)},
                     {"equivalence", equivalence_json(v.pooled->equivalence, v.pooled->equivalence_p_holm)}};
    else
      j["pooled"] = nullptr;
    if (v.seed)
      j["seed_level"] = {{"n", v.seed->t.n},
                         {"mean", v.seed->t.mean},
                         {"sd", v.seed->t.sd},
                         {"t", std::isinf(v.seed->t.t) ? json(v.seed->t.t > 0 ? "inf" : "-inf") : json(v.seed->t.t)},
                         {"df", v.seed->t.df},
                         {"p", v.seed->t.p},
                         {"p_holm", optional_json(v.seed->p_holm)},
                         {"equivalence", equivalence_json(v.seed->equivalence, v.seed->equivalence_p_holm)}};
    else
      j["seed_level"] = nullptr;
    claims.push_back(std::move(j));
  }
  return {{"claims_file", verdicts.path},
          {"alpha", verdicts.alpha},
          {"bootstrap", {{"samples", verdicts.samples}, {"seed", verdicts.bootstrap_seed}}},
          {"family", {{"pooled", verdicts.pooled_family}, {"seed_level", verdicts.seed_family}}},
          {"claims", claims}};
}

std::string verdicts_markdown(const Verdicts& verdicts) {
  std::string out = "Verdicts of " + verdicts.path + ". " + rule_text(verdicts) + "\n\n";
  out += "| claim | Δ (A − B) | per seed | pooled: Δ, p (Holm) | over seeds: t, p (Holm) | equivalence p (Holm): "
         "pooled / seeds | verdict |\n| --- | ---: | --- | ---: | ---: | ---: | --- |\n";
  for (const ClaimVerdict& v : verdicts.claims) {
    const Cells c = cells(v);
    const std::string title = v.claim.label.empty() ? v.claim.text : v.claim.label + " (" + v.claim.text + ")";
    out += "| " + markdown_cell(title) + " | " + c.delta + " | " + c.per_seed + " | " + c.pooled + " | " + c.seed +
           " | " + c.equivalence + " | **" + markdown_cell(v.decision.verdict) + "** |\n";
  }
  out += "\n";
  for (const ClaimVerdict& v : verdicts.claims) out += "- " + markdown_cell(details(v)) + ".\n";
  return out;
}

std::string verdicts_html(const Verdicts& verdicts) {
  using text::html_escape;
  std::string rows;
  for (const ClaimVerdict& v : verdicts.claims) {
    const Cells c = cells(v);
    const std::string kind = v.decision.verdict == "holds" || v.decision.verdict.starts_with("equivalent") ? "holds"
                             : v.decision.verdict == "not distinguishable" || v.decision.verdict == "not measured"
                                 ? "same"
                                 : "differs";
    rows += "<tr class=\"claim\" data-line=\"" + std::to_string(v.claim.line) + "\" title=\"" +
            html_escape(details(v)) + "\"><td class=\"name\">" + html_escape(v.claim.title()) +
            (v.claim.label.empty() ? "" : "<br><small>" + html_escape(v.claim.text) + "</small>") + "</td><td>" +
            c.delta + "</td><td>" + c.per_seed + "</td><td>" + html_escape(c.pooled) + "</td><td>" +
            html_escape(c.seed) + "</td><td>" + html_escape(c.equivalence) + "</td><td class=\"verdict " + kind +
            "\">" + html_escape(v.decision.verdict) + "</td></tr>\n";
  }
  return "<section class=\"card\" id=\"verdicts\"><h2>Verdicts of " + html_escape(verdicts.path) +
         "</h2>\n<div class=\"scroll\"><table id=\"verdict-table\">\n<thead><tr><th>claim</th><th>Δ (A − B)</th>"
         "<th>per seed</th><th>pooled: Δ, p (Holm)</th><th>over seeds: t, p (Holm)</th>"
         "<th>equivalence p (Holm): pooled / seeds</th><th>verdict</th></tr></thead>\n<tbody>\n" +
         rows + "</tbody></table></div>\n<p class=\"caption\">" + html_escape(rule_text(verdicts)) +
         " Each row's title gives its numbers and which part of the rule fired (docs/verdicts.md).</p></section>\n";
}

}  // namespace attn::report
