#include "attn/report/claims.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/decode/attention_stats.h"
#include "attn/report/run_summary.h"

namespace attn::report {

namespace {

constexpr const char* kForms =
    "a claim is 'A beats B on SET [MODEL]', 'A within M of B on SET [MODEL]', 'A slope above|below B on SET "
    "[MODEL]', 'A slope within M of B on SET [MODEL]' or, on attention statistics, 'A COMPONENT layer L STATISTIC "
    "[slope] above|below|within M of TARGET on SET [MODEL]', optionally followed by '| label' (docs/verdicts.md)";

bool is_component(const std::string& w) { return w == "encoder" || w == "decoder" || w == "cross"; }

bool is_statistic(const std::string& w) {
  return std::find(decode::kStatisticNames.begin(), decode::kStatisticNames.end(), w) != decode::kStatisticNames.end();
}

// A layer as claims name it: a whole number (0-based), "last" or "all".
bool is_layer(const std::string& w) {
  if (w == "last" || w == "all") return true;
  return !w.empty() && w.size() <= 4 && std::all_of(w.begin(), w.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

std::string statistic_names() {
  std::string out;
  for (const char* name : decode::kStatisticNames) out += std::string(out.empty() ? "" : ", ") + name;
  return out;
}

std::string trim(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const std::size_t last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<double> number(std::string_view s) {
  if (s.starts_with("±"))
    s.remove_prefix(std::string_view("±").size());
  else if (s.starts_with("+-"))
    s.remove_prefix(2);
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// 'A COMPONENT layer L STATISTIC [slope] above|below|within M of TARGET on SET [MODEL]', from w[i] on.
Claim parse_statistic_claim(const std::vector<std::string>& w, std::size_t i, Claim c, const std::string& where) {
  const auto fail = [&](const std::string& what) { throw Error(where + ": " + what + "; " + kForms); };
  const auto take = [&](const char* what) -> const std::string& {
    if (i >= w.size()) fail(std::string("the claim ends before its ") + what);
    return w[i++];
  };
  const auto layer = [&]() -> const std::string& {
    const std::string& l = take("layer");
    if (!is_layer(l)) fail("the layer '" + l + "' is not a layer number (0-based), 'last' or 'all'");
    return l;
  };
  StatTerm term;
  term.component = take("component");
  ++i;  // "layer"
  term.layer = layer();
  term.statistic = take("statistic");
  if (!is_statistic(term.statistic))
    fail("unknown statistic '" + term.statistic + "' (one of " + statistic_names() + ")");
  c.stat = term;
  if (i < w.size() && w[i] == "slope") {
    c.slope = true;
    ++i;
  }
  const std::string& relation = take("relation");
  if (relation == "above") {
    c.sign = +1;
  } else if (relation == "below") {
    c.sign = -1;
  } else if (relation == "within") {
    const std::string& m = take("margin");
    const std::optional<double> v = number(m);
    if (!v || *v <= 0.0) fail("the margin '" + m + "' is not a positive number");
    c.margin = v;
    if (i >= w.size() || w[i] != "of") fail("expected 'of'" + (i < w.size() ? " at '" + w[i] + "'" : std::string()));
    ++i;
  } else {
    fail("unknown relation '" + relation + "' (a statistic is 'above', 'below' or 'within M of' its target)");
  }
  const std::string& target = take("target (layer L, a number or a run group)");
  if (target == "layer") {
    c.b = c.a;
    c.b_layer = layer();
    if (c.b_layer == term.layer) fail("a claim compares two different layers (both are " + term.layer + ")");
  } else if (const std::optional<double> v = number(target); v && target.find_first_of("±+") != 0) {
    c.constant = v;
  } else {
    c.b = target;
    if (c.b == c.a)
      fail("a claim compares two different run groups (both are " + c.a + "); compare layers with 'layer L'");
  }
  if (i >= w.size() || w[i] != "on") fail("expected 'on'" + (i < w.size() ? " at '" + w[i] + "'" : std::string()));
  ++i;
  c.set = take("test set");
  if (i < w.size()) c.model = w[i++];
  if (i < w.size()) fail("unexpected '" + w[i] + "' after the model");
  return c;
}

Claim parse_claim(const std::vector<std::string>& w, const std::string& where) {
  const auto fail = [&](const std::string& what) { throw Error(where + ": " + what + "; " + kForms); };
  Claim c;
  std::size_t i = 0;
  const auto take = [&](const char* what) -> const std::string& {
    if (i >= w.size()) fail(std::string("the claim ends before its ") + what);
    return w[i++];
  };
  const auto expect = [&](const char* word) {
    if (i >= w.size() || w[i] != word)
      fail(std::string("expected '") + word + "'" + (i < w.size() ? " at '" + w[i] + "'" : ""));
    ++i;
  };
  const auto margin = [&] {
    const std::string& m = take("margin");
    const std::optional<double> v = number(m);
    if (!v || *v <= 0.0) fail("the margin '" + m + "' is not a positive number");
    c.margin = v;
  };
  c.a = take("first run group");
  if (i + 1 < w.size() && is_component(w[i]) && w[i + 1] == "layer") return parse_statistic_claim(w, i, c, where);
  if (i < w.size() && w[i] == "slope") {
    c.slope = true;
    ++i;
  }
  const std::string& relation = take("relation");
  if (relation == "beats" && !c.slope) {
    c.sign = +1;
  } else if (relation == "above" && c.slope) {
    c.sign = +1;
  } else if (relation == "below" && c.slope) {
    c.sign = -1;
  } else if (relation == "within") {
    margin();
    expect("of");
  } else {
    fail("unknown relation '" + relation + "'");
  }
  c.b = take("second run group");
  expect("on");
  c.set = take("test set");
  if (i < w.size()) c.model = w[i++];
  if (i < w.size()) fail("unexpected '" + w[i] + "' after the model");
  if (c.a == c.b) fail("a claim compares two different run groups (both are " + c.a + ")");
  return c;
}

}  // namespace

std::string Claim::a_side() const {
  if (!stat) return a;
  return a + " " + stat->component + " layer " + stat->layer + " " + stat->statistic;
}

std::string Claim::b_side() const {
  if (!stat) return b;
  if (constant) return format_number(*constant);
  if (!b_layer.empty()) return "layer " + b_layer;
  return b;
}

ClaimsFile parse_claims(std::string_view text, const std::string& path) {
  ClaimsFile file;
  file.path = path;
  bool alpha_given = false;
  std::size_t line_no = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line_no);
    const std::size_t bar = line.find('|');
    const std::string body = trim(std::string_view(line).substr(0, bar));
    std::vector<std::string> words;
    std::istringstream in(body);
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) throw Error(where + ": a label without a claim; " + kForms);
    if (words[0] == "alpha") {
      const double a = words.size() == 2 ? number(words[1]).value_or(0.0) : 0.0;
      require(a > 0.0 && a < 1.0, where + ": 'alpha P' takes one level strictly between 0 and 1");
      require(!alpha_given, where + ": alpha is given twice");
      require(bar == std::string::npos, where + ": 'alpha P' takes no label");
      alpha_given = true;
      file.alpha = a;
      continue;
    }
    Claim c = parse_claim(words, where);
    c.line = line_no;
    c.text = body;
    if (bar != std::string::npos) c.label = trim(std::string_view(line).substr(bar + 1));
    file.claims.push_back(std::move(c));
  }
  require(!file.claims.empty(), path + ": no claims in it; " + kForms);
  return file;
}

ClaimsFile read_claims(const std::filesystem::path& path) { return parse_claims(read_text(path), path.string()); }

}  // namespace attn::report
