#include "attn/report/report_page.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "attn/core/format.h"
#include "attn/report/chart.h"
#include "attn/report/colours.h"
#include "attn/report/comparison_page.h"
#include "attn/text/html.h"
#include "attn/web/assets.h"

namespace attn::report {

namespace {

using text::html_escape;

// The curves' plot box (chart.h).
const PlotBox kBox;

// Wall time in the unit that keeps the labels short.
struct TimeUnit {
  double seconds;
  const char* name;
};
TimeUnit time_unit(double max_s) {
  if (max_s <= 180) return {1, "seconds"};
  if (max_s <= 3 * 3600) return {60, "minutes"};
  return {3600, "hours"};
}

// ---- plots ----

enum class XKind { updates, time };

struct PlotSpec {
  const char* id;
  const char* title;
  const char* y_label;
  bool log_y;
  bool markers;  // a dot per point (validations: few, and each one a checkpoint)
  const std::vector<SeriesPoint> RunSummary::*series;
};

double x_of(const SeriesPoint& p, XKind x) { return x == XKind::updates ? static_cast<double>(p.update) : p.elapsed_s; }

std::string point_title(const RunSummary& run, const SeriesPoint& p, const char* what) {
  return html_escape(run.name) + " · update " + format_count(p.update) + " · " + format_duration(p.elapsed_s) + " · " +
         what + " " + format_fixed(p.value, 2);
}

std::string plot(const std::vector<RunSummary>& runs, const std::vector<std::string>& colours, const PlotSpec& spec,
                 XKind xkind) {
  const char* x_name = xkind == XKind::updates ? "updates" : "time";
  std::string out = "<figure class=\"plot\" data-plot=\"" + std::string(spec.id) + "-" + x_name + "\">\n<figcaption>" +
                    spec.title + " <span>vs " + (xkind == XKind::updates ? "updates" : "wall time") +
                    "</span></figcaption>\n";
  out += svg_open(kBox, std::string(spec.title) + " vs " + x_name);

  // Data ranges over every run's points.
  double x_max = 0, y_lo = HUGE_VAL, y_hi = -HUGE_VAL;
  std::size_t points = 0;
  for (const RunSummary& r : runs)
    for (const SeriesPoint& p : r.*spec.series) {
      if (spec.log_y && !(p.value > 0)) continue;
      x_max = std::max(x_max, x_of(p, xkind));
      y_lo = std::min(y_lo, p.value);
      y_hi = std::max(y_hi, p.value);
      ++points;
    }
  out += svg_frame(kBox);
  if (points == 0) return out + svg_empty(kBox, "no data yet") + "</svg>\n</figure>\n";
  const TimeUnit unit = time_unit(x_max);
  const double x_scale = xkind == XKind::updates ? 1.0 : unit.seconds;  // data per axis unit
  Axis x = value_axis(0.0, std::max(x_max / x_scale, xkind == XKind::updates ? 1.0 : 1e-3), false, kBox.plot_l(),
                      kBox.plot_r());
  Axis y = value_axis(y_lo, y_hi, spec.log_y, kBox.plot_b(), kBox.plot_t());
  if (!spec.log_y && y_lo == y_hi) y = value_axis(y_lo - 1, y_hi + 1, false, kBox.plot_b(), kBox.plot_t());
  out += svg_axes(kBox, x, y,
                  xkind == XKind::updates ? std::string("updates") : std::string("wall time (") + unit.name + ")",
                  spec.y_label);

  // One polyline per run with points; markers where the points are few (validations).
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const RunSummary& r = runs[k];
    const std::vector<SeriesPoint>& series = r.*spec.series;
    std::string coords;
    std::size_t n = 0;
    for (const SeriesPoint& p : series) {
      if (spec.log_y && !(p.value > 0)) continue;
      if (n++) coords += ' ';
      coords += format_fixed(x.map(x_of(p, xkind) / x_scale), 1) + "," + format_fixed(y.map(p.value), 1);
    }
    if (n == 0) continue;
    const std::string name = html_escape(r.name);
    out += "<g class=\"run\" data-run=\"" + name + "\" style=\"--c:" + colours[k] + "\">";
    out += "<polyline class=\"curve\" data-run=\"" + name + "\" data-points=\"" + std::to_string(n) + "\" points=\"" +
           coords + "\"><title>" + name + (r.arch.empty() ? "" : " (" + html_escape(r.arch) + ")") +
           "</title></polyline>";
    if ((spec.markers && n <= 200) || n == 1) {  // a lone point would not show as a line
      for (const SeriesPoint& p : series) {
        if (spec.log_y && !(p.value > 0)) continue;
        out += "<circle class=\"pt\" cx=\"" + format_fixed(x.map(x_of(p, xkind) / x_scale), 1) + "\" cy=\"" +
               format_fixed(y.map(p.value), 1) + "\" r=\"2.6\"><title>" + point_title(r, p, spec.y_label) +
               "</title></circle>";
      }
    }
    out += "</g>\n";
  }
  out += "</svg>\n</figure>\n";
  return out;
}

// ---- table ----

std::string cell(const std::optional<double>& v, int decimals, bool top = false) {
  if (!v) return "<td class=\"na\">—</td>";
  return std::string("<td") + (top ? " class=\"top\"" : "") + ">" + format_fixed(*v, decimals) + "</td>";
}

std::string parameters_text(std::int64_t n) {
  if (n >= 1000000) return format_fixed(static_cast<double>(n) / 1e6, 2) + " M";
  if (n >= 1000) return format_fixed(static_cast<double>(n) / 1e3, 1) + " k";
  return std::to_string(n);
}

// Whether v is the highest of its column (and there is more than one run to compare).
bool is_top(const std::vector<RunSummary>& runs, const std::function<std::optional<double>(const RunSummary&)>& get,
            const std::optional<double>& v) {
  if (!v || runs.size() < 2) return false;
  for (const RunSummary& r : runs)
    if (const auto w = get(r); w && *w > *v) return false;
  return true;
}

std::string table(const std::vector<RunSummary>& runs, const std::vector<std::string>& colours) {
  auto valid_bleu = [](const RunSummary& r) { return r.best_valid_bleu; };
  auto test_bleu = [](const RunSummary& r) -> std::optional<double> {
    return r.test && r.test->best ? r.test->best->bleu : std::nullopt;
  };
  auto avg5_bleu = [](const RunSummary& r) -> std::optional<double> {
    return r.test && r.test->avg5 ? r.test->avg5->bleu : std::nullopt;
  };
  std::string out =
      "<div class=\"scroll\"><table id=\"runs\">\n<thead><tr>"
      "<th rowspan=\"2\">run</th><th rowspan=\"2\">arch</th><th rowspan=\"2\">parameters</th>"
      "<th rowspan=\"2\" title=\"median over the train log lines after the first 10% of updates\">target tok/s</th>"
      "<th rowspan=\"2\">peak memory</th><th colspan=\"3\" class=\"group\">best validation</th>"
      "<th rowspan=\"2\">trained<div class=\"sub\">updates · time</div></th><th colspan=\"5\" class=\"group\">test</th></tr>\n<tr>"
      "<th>BLEU</th><th>chrF</th><th>at update · time</th>"
      "<th title=\"the test set of score/&lt;set&gt;.best.json\">scored</th>"
      "<th title=\"best.attn, beam 5\">BLEU</th><th>chrF</th>"
      "<th title=\"the average of the last 5 checkpoints\">avg5 BLEU</th><th>avg5 chrF</th></tr></thead>\n<tbody>\n";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const RunSummary& r = runs[k];
    const std::string name = html_escape(r.name);
    out += "<tr class=\"run\" data-run=\"" + name + "\" style=\"--c:" + colours[k] + "\">";
    out += "<td class=\"name\" title=\"" + html_escape(r.dir) + "\"><i class=\"sw\"></i>" + name +
           (r.in_progress ? " <span class=\"badge\">in progress</span>" : "") + "</td>";
    out += r.arch.empty() ? "<td class=\"na\">—</td>" : "<td>" + html_escape(r.arch) + "</td>";
    out += r.parameters
               ? "<td title=\"" + format_count(*r.parameters) + "\">" + parameters_text(*r.parameters) + "</td>"
               : "<td class=\"na\">—</td>";
    out += r.median_tokens_per_s ? "<td>" + format_count(std::llround(*r.median_tokens_per_s)) + "</td>"
                                 : "<td class=\"na\">—</td>";
    out += r.peak_rss_mb
               ? "<td title=\"peak_rss_mb in log.jsonl\">" + format_count(std::llround(*r.peak_rss_mb)) + " MB</td>"
               : "<td class=\"na\" title=\"no record of log.jsonl has peak_rss_mb\">not recorded</td>";
    out += cell(r.best_valid_bleu, 2, is_top(runs, valid_bleu, r.best_valid_bleu));
    out += cell(r.valid_chrf_at_best, 2);
    out += r.best_update
               ? "<td>" + format_count(*r.best_update) + " · " + format_duration(r.best_elapsed_s.value_or(0)) + "</td>"
               : "<td class=\"na\">—</td>";
    out += r.updates ? "<td>" + format_count(*r.updates) + " · " + format_duration(r.elapsed_s.value_or(0)) + "</td>"
                     : "<td class=\"na\">—</td>";
    if (r.test) {
      out += "<td>" + html_escape(r.test->set) + "</td>";
      const std::optional<double> tb = test_bleu(r), ab = avg5_bleu(r);
      out += cell(tb, 2, is_top(runs, test_bleu, tb));
      out += cell(r.test->best ? r.test->best->chrf : std::nullopt, 2);
      out += cell(ab, 2, is_top(runs, avg5_bleu, ab));
      out += cell(r.test->avg5 ? r.test->avg5->chrf : std::nullopt, 2);
    } else {
      out += "<td class=\"na\" colspan=\"5\">not scored</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace

nlohmann::json report_json(const std::vector<RunSummary>& runs, const Comparison& comparison,
                           const Verdicts* verdicts) {
  nlohmann::json j = runs_json(runs);
  if (!comparison.archs.empty()) j["comparison"] = comparison_json(comparison);
  if (verdicts) j["verdicts"] = verdicts_json(*verdicts);
  return j;
}

std::string report_page(const std::vector<RunSummary>& runs, const Comparison& comparison, const Verdicts* verdicts) {
  const bool seeds = !comparison.archs.empty();
  const std::vector<std::string> colours = run_colours(runs.size(), comparison);
  std::string page = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>attn report — " +
                     std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") + "</title>\n" +
                     web::style(web::Asset::report_css) + (seeds ? comparison_style() : "") + "</head>\n<body>\n";
  page += "<header class=\"top\"><h1><span>attn</span> report</h1><div class=\"meta\">" + std::to_string(runs.size()) +
          (runs.size() == 1 ? " run" : " runs") +
          (seeds ? ": " + std::to_string(comparison.archs.size()) +
                       " archs over seeds, training curves and the table of runs"
                 : std::string(": training curves and the table of runs")) +
          "</div></header>\n<main>\n";

  // Legend, then the plots: one row per metric, against updates (left) and wall time (right).
  std::string legend = "<div class=\"legend\">";
  for (std::size_t k = 0; k < runs.size(); ++k)
    legend += "<span data-run=\"" + html_escape(runs[k].name) + "\" style=\"--c:" + colours[k] +
              "\"><i class=\"sw\"></i>" + html_escape(runs[k].name) +
              (runs[k].arch.empty() ? "" : " <small>" + html_escape(runs[k].arch) + "</small>") + "</span>";
  legend += "</div>\n";

  // A comparison over seeds comes first; the table of runs (one row per seed) then follows the curves.
  const std::string runs_table = "<section class=\"card\" id=\"table\"><h2>" +
                                 std::string(seeds ? "Runs (one row per seed)" : "Runs") + "</h2>\n" +
                                 table(runs, colours) + "</section>\n";
  std::string notes;
  for (const RunSummary& r : runs)
    for (const std::string& n : r.notes)
      notes += "<li data-run=\"" + html_escape(r.name) + "\"><b>" + html_escape(r.name) + "</b>: " + html_escape(n) +
               "</li>\n";
  if (!notes.empty())
    notes = "<section class=\"card\" id=\"notes\"><h2>Notes</h2>\n<ul class=\"notes\">\n" + notes + "</ul></section>\n";
  if (seeds)
    page += comparison_sections(comparison, verdicts ? verdicts_html(*verdicts) : "");
  else
    page += runs_table + notes;

  static const PlotSpec kPlots[] = {
      {"train-loss", "Training loss", "loss (nats/token)", false, false, &RunSummary::train_loss},
      {"valid-ppl", "Validation perplexity", "perplexity (log scale)", true, true, &RunSummary::valid_ppl},
      {"valid-bleu", "Validation BLEU", "BLEU (greedy)", false, true, &RunSummary::valid_bleu}};
  page += "<section class=\"card\" id=\"curves\"><h2>Curves</h2>\n" + legend + "<div class=\"plots\">\n";
  for (const PlotSpec& spec : kPlots) {
    page += plot(runs, colours, spec, XKind::updates);
    page += plot(runs, colours, spec, XKind::time);
  }
  page += "</div></section>\n";
  if (seeds) page += runs_table + notes;
  page += "</main>\n";

  page +=
      "<footer>Training loss: the label-smoothed cross-entropy per target token as the trainer logs it (averaged "
      "over a window of up to --log-every updates). Target tok/s: the median of the training log's tokens/s over the lines after the first 10% of updates. "
      "Peak memory: the largest resident set of the training process (peak_rss_mb in log.jsonl), in MB of "
      "2<sup>20</sup> bytes. Best validation: the validation with the highest BLEU (greedy decoding of the validation "
      "set), which best.attn holds. Test: attn score of the translations of best.attn and of avg5.attn (the average "
      "of the last 5 checkpoints) on the plain test set of score/&lt;set&gt;.best.json. A resumed run's log is read "
      "with the resumed process's lines winning. The run layout: docs/report.md. Written by attn report." +
      (seeds
           ? std::string(
                 "<br>Archs over seeds: runs in directories named seed&lt;N&gt; are grouped by arch; scores are the mean "
                 "± the sample standard deviation (n − 1) over the seeds, from hyp/ scored against --refs or from "
                 "segments/, else from score/. Δ BLEU: the mean over the seeds both have of the arch's BLEU minus the baseline's. p (pooled): "
                 "sacreBLEU's paired bootstrap (") +
                 std::to_string(comparison.options.bootstrap_samples) + " resamples, seed " +
                 std::to_string(comparison.options.bootstrap_seed) +
                 ") of the common seeds' translations concatenated into one paired sample (seed s against seed s); "
                 "the two-sided p of the absolute BLEU difference. Verdict: better or worse when Δ has that sign and "
                 "the pooled p &lt; 0.05, else not distinguishable. BLEU by reference length: the main test set's "
                 "segments grouped by reference words, each group scored as a corpus; the mean over seeds. See "
                 "docs/report.md."
           : std::string()) +
      "</footer>\n";
  page += "<script type=\"application/json\" id=\"attn-report\">" +
          text::script_safe(
              report_json(runs, comparison, verdicts).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
          "</script>\n";
  page += web::script(web::Asset::report_js);
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace attn::report
