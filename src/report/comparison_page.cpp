#include "attn/report/comparison_page.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "attn/core/format.h"
#include "attn/text/html.h"
#include "attn/report/chart.h"
#include "attn/report/colours.h"
#include "attn/web/assets.h"

namespace attn::report {

namespace {

using text::html_escape;

std::string seed_list(const std::vector<int>& seeds) {
  std::string text;
  for (int s : seeds) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

const OutputSummary* find_output(const ArchSummary& a, const std::string& set, const std::string& model) {
  const auto it = a.outputs.find(Output{set, model});
  return it == a.outputs.end() ? nullptr : &it->second;
}

// "40.12 ± 0.35"; one seed: the value alone.
std::string spread_text(const Spread& s) {
  return format_fixed(s.mean, 2) + (s.sd ? " ± " + format_fixed(*s.sd, 2) : "");
}

std::string spread_cell(const Spread& s, std::size_t seeds) {
  if (s.n == 0) return "<td class=\"na\">—</td>";
  const std::string title = std::to_string(s.n) + (s.n == 1 ? " seed: no sd" : " seeds: mean ± sample sd");
  return "<td title=\"" + title + "\">" + spread_text(s) +
         (s.n < seeds ? " <small>(" + std::to_string(s.n) + ")</small>" : "") + "</td>";
}

std::string p_text(double p) { return p < 0.001 ? format_fixed(p, 4) : format_fixed(p, 3); }

// Δ, p (pooled) and verdict of one output against the baseline.
std::string paired_cells(const ArchSummary& a, const OutputSummary* o, bool is_baseline, bool with_verdict) {
  const int cells = with_verdict ? 3 : 2;
  if (is_baseline) return "<td class=\"na\" colspan=\"" + std::to_string(cells) + "\">baseline</td>";
  std::string out;
  if (o && o->delta_bleu) {
    const std::string on =
        o->delta_seeds.size() < a.seeds.size() ? " <small>seeds " + seed_list(o->delta_seeds) + "</small>" : "";
    out += "<td class=\"delta\">" + std::string(*o->delta_bleu >= 0 ? "+" : "−") +
           format_fixed(std::abs(*o->delta_bleu), 2) + on + "</td>";
  } else {
    out += "<td class=\"na\">—</td>";
  }
  if (o && o->paired) {
    out += "<td class=\"p\" title=\"per seed: ";
    for (std::size_t i = 0; i < o->paired->seeds.size(); ++i)
      out += (i ? ", " : "") + std::string("seed ") + std::to_string(o->paired->seeds[i]) +
             " p = " + p_text(o->paired->p_per_seed[i]);
    out += "\">" + p_text(o->paired->p_pooled) + "</td>";
  } else {
    out += "<td class=\"na\" title=\"no translations and references to pair\">—</td>";
  }
  if (with_verdict) {
    if (o && o->paired && o->delta_bleu) {
      const std::string v = verdict(*o->delta_bleu, o->paired->p_pooled);
      out += v == "not distinguishable"
                 ? "<td class=\"verdict same\" title=\"not distinguishable at p &lt; 0.05\">n.d.</td>"
                 : "<td class=\"verdict " + v + "\" title=\"Δ &" + (v == "better" ? "gt" : "lt") +
                       "; 0 and pooled p &lt; 0.05\">" + v + "</td>";
    } else {
      out += "<td class=\"na\">—</td>";
    }
  }
  return out;
}

std::string updates_text(const ArchSummary& a) {
  if (!a.updates_min) return "—";
  if (*a.updates_min == *a.updates_max) return format_count(*a.updates_min);
  return format_count(*a.updates_min) + "–" + format_count(*a.updates_max);
}

std::string arch_table(const Comparison& c) {
  std::vector<std::string> probes;
  for (const std::string& set : c.sets)
    if (set != c.main_set) probes.push_back(set);
  const std::string first_model = c.models.empty() ? "best" : c.models.front();
  std::string out = "<div class=\"scroll\"><table id=\"archs\">\n<thead><tr>"
                    "<th rowspan=\"2\">arch</th><th rowspan=\"2\">seeds</th><th rowspan=\"2\">updates</th>";
  for (std::size_t m = 0; m < c.models.size(); ++m)
    out += "<th colspan=\"" + std::string(m == 0 ? "5" : "4") + "\" class=\"group\">" + html_escape(c.main_set) +
           " · " + html_escape(c.models[m]) + "</th>";
  if (!probes.empty())
    out += "<th colspan=\"" + std::to_string(probes.size()) + "\" class=\"group\">probes: BLEU · " +
           html_escape(first_model) + "</th>";
  out += "</tr>\n<tr>";
  for (std::size_t m = 0; m < c.models.size(); ++m) {
    out +=
        "<th>BLEU</th><th>chrF</th><th title=\"mean over the common seeds of (arch − baseline)\">Δ BLEU</th>"
        "<th title=\"paired bootstrap on the common seeds' outputs pooled (per-seed p in the cell's title)\">p (pooled)</th>";
    if (m == 0)
      out += "<th title=\"the pooled test alone (Δ's sign, p &lt; 0.05); a claim's verdict needs both tests: "
             "attn report --claims\">pooled test</th>";
  }
  for (const std::string& p : probes)
    out += "<th title=\"" + html_escape(p) + "\">K = " + std::to_string(joined_sentences(p)) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t g = 0; g < c.archs.size(); ++g) {
    const ArchSummary& a = c.archs[g];
    const bool is_baseline = c.has_baseline && g == 0;
    out += "<tr class=\"arch\" data-arch=\"" + html_escape(a.arch) + "\" style=\"--c:" + arch_colour(g) + "\">";
    out += "<td class=\"name\"><i class=\"sw\"></i>" + html_escape(a.arch) +
           (is_baseline ? " <span class=\"badge\">baseline</span>" : "") + "</td>";
    out += "<td title=\"seeds " + seed_list(a.seeds) + "\">" + std::to_string(a.seeds.size()) + "</td>";
    out += "<td>" + updates_text(a) + "</td>";
    for (std::size_t m = 0; m < c.models.size(); ++m) {
      const OutputSummary* o = find_output(a, c.main_set, c.models[m]);
      out += o ? spread_cell(o->bleu, a.seeds.size()) + spread_cell(o->chrf, a.seeds.size())
               : "<td class=\"na\">—</td><td class=\"na\">—</td>";
      out += paired_cells(a, o, is_baseline, m == 0);
    }
    for (const std::string& p : probes) {
      const OutputSummary* o = find_output(a, p, first_model);
      out += o ? spread_cell(o->bleu, a.seeds.size()) : "<td class=\"na\">—</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (c.has_baseline)
    out +=
        "<p class=\"caption\">mean ± sample sd over seeds; Δ BLEU: mean over common seeds of arch − " +
        html_escape(c.options.baseline) +
        "; p (pooled): paired bootstrap of the common seeds' translations pooled (two-sided); pooled test: better or "
        "worse when Δ has that sign and p &lt; 0.05, n.d.: not distinguishable at p &lt; 0.05. That is the pooled "
        "test alone, which cannot see the seeds' variance: a claim's verdict needs it and the paired t over seeds to "
        "agree after Holm (attn report --claims, docs/verdicts.md).</p>\n";
  return out;
}

// Every set and model of every arch against the baseline, with the per-seed p-values.
std::string paired_table(const Comparison& c) {
  std::string rows;
  for (std::size_t g = 1; g < c.archs.size(); ++g)
    for (const std::string& set : c.sets)
      for (const std::string& model : c.models) {
        const ArchSummary& a = c.archs[g];
        const OutputSummary* o = find_output(a, set, model);
        if (!o || !o->paired) continue;
        rows += "<tr data-arch=\"" + html_escape(a.arch) + "\" style=\"--c:" + arch_colour(g) +
                "\"><td class=\"name\"><i class=\"sw\"></i>" + html_escape(a.arch) + "</td><td>" + html_escape(set) +
                "</td><td>" + html_escape(model) + "</td><td>" + seed_list(o->paired->seeds) + "</td>";
        rows += "<td>" + format_fixed(o->paired->pooled_baseline_score, 2) + " → " +
                format_fixed(o->paired->pooled_score, 2) + "</td>";
        std::string per_seed;
        for (std::size_t i = 0; i < o->paired->seeds.size(); ++i)
          per_seed += (i ? " · " : "") + p_text(o->paired->p_per_seed[i]);
        rows += "<td>" + per_seed + "</td>" + paired_cells(a, o, false, true) + "</tr>\n";
      }
  if (rows.empty()) return "";
  return "<details id=\"paired-details\"><summary>Paired bootstrap of every set and model (per-seed p-values)</summary>\n"
         "<div class=\"scroll\"><table id=\"paired\">\n<thead><tr><th>arch</th><th>set</th><th>model</th><th>seeds paired</th>"
         "<th title=\"corpus BLEU of the pooled sample: baseline → arch\">pooled BLEU</th><th>p per seed</th>"
         "<th>Δ BLEU</th><th>p (pooled)</th><th>verdict</th></tr></thead>\n<tbody>\n" +
         rows + "</tbody></table></div></details>\n";
}

// ---- charts ----

// One arch's line: a spread (or nothing) per x position.
struct ChartLine {
  std::string arch, colour;
  std::vector<std::optional<Spread>> points;
};

struct ChartSpec {
  std::string id, title, subtitle, x_title, y_title;
  std::vector<double> x;                               // the x value of each position
  std::function<std::string(std::size_t)> point_name;  // for the points' titles
};

std::string line_chart(const ChartSpec& spec, const Axis& x_axis, const std::vector<ChartLine>& lines) {
  const PlotBox box;
  std::string out = "<figure class=\"plot\" data-plot=\"" + spec.id + "\">\n<figcaption>" + spec.title + " <span>" +
                    spec.subtitle + "</span></figcaption>\n" + svg_open(box, spec.title) + svg_frame(box);
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (const ChartLine& l : lines)
    for (const auto& p : l.points)
      if (p && p->n > 0) {
        lo = std::min(lo, p->mean - p->sd.value_or(0.0));
        hi = std::max(hi, p->mean + p->sd.value_or(0.0));
      }
  if (lo > hi) return out + svg_empty(box, "no data") + "</svg>\n</figure>\n";
  lo = std::max(0.0, lo);
  hi = std::max(hi, lo + 1.0);  // a flat line (BLEU 0 on toy data) sits at the bottom, not mid-axis around 0
  const Axis y = value_axis(lo, hi, false, box.plot_b(), box.plot_t());
  out += svg_axes(box, x_axis, y, spec.x_title, spec.y_title);
  for (const ChartLine& l : lines) {
    std::string coords, marks;
    std::size_t n = 0;
    for (std::size_t i = 0; i < l.points.size(); ++i) {
      const auto& p = l.points[i];
      if (!p || p->n == 0) continue;
      const std::string px = format_fixed(x_axis.map(spec.x[i]), 1), py = format_fixed(y.map(p->mean), 1);
      if (n++) coords += ' ';
      coords += px + "," + py;
      const std::string title = html_escape(l.arch) + " · " + spec.point_name(i) + " · BLEU " + spread_text(*p) + " (" +
                                std::to_string(p->n) + (p->n == 1 ? " seed)" : " seeds)");
      if (p->sd)
        marks += "<line class=\"whisker\" x1=\"" + px + "\" x2=\"" + px + "\" y1=\"" +
                 format_fixed(y.map(std::max(lo, p->mean - *p->sd)), 1) + "\" y2=\"" +
                 format_fixed(y.map(p->mean + *p->sd), 1) + "\"/>";
      marks += "<circle class=\"pt\" cx=\"" + px + "\" cy=\"" + py + "\" r=\"3\"><title>" + title + "</title></circle>";
    }
    if (n == 0) continue;
    out += "<g class=\"arch\" data-arch=\"" + html_escape(l.arch) + "\" style=\"--c:" + l.colour + "\">";
    out += "<polyline class=\"curve\" data-arch=\"" + html_escape(l.arch) + "\" data-points=\"" + std::to_string(n) +
           "\" points=\"" + coords + "\"><title>" + html_escape(l.arch) + "</title></polyline>" + marks + "</g>\n";
  }
  return out + "</svg>\n</figure>\n";
}

std::string chart_legend(const Comparison& c) {
  std::string out = "<div class=\"legend\">";
  for (std::size_t g = 0; g < c.archs.size(); ++g)
    out += "<span data-arch=\"" + html_escape(c.archs[g].arch) + "\" style=\"--c:" + arch_colour(g) +
           "\"><i class=\"sw\"></i>" + html_escape(c.archs[g].arch) + " <small>" +
           std::to_string(c.archs[g].seeds.size()) + " seed" + (c.archs[g].seeds.size() == 1 ? "" : "s") +
           "</small></span>";
  return out + "</div>\n";
}

std::string length_chart(const Comparison& c, const std::string& model) {
  ChartSpec spec;
  spec.id = "bleu-by-length";
  spec.title = "BLEU by reference length";
  spec.subtitle = html_escape(c.main_set) + " · " + html_escape(model) + " · mean ± sd over seeds";
  spec.x_title = "reference length (words) · segments";
  spec.y_title = "BLEU";
  std::vector<std::string> names;
  for (std::size_t b = 0; b < c.buckets.size(); ++b) {
    spec.x.push_back(static_cast<double>(b));
    names.push_back(c.buckets[b].label + " · " + std::to_string(c.buckets[b].segments.size()));
  }
  spec.point_name = [&c](std::size_t b) {
    return c.buckets[b].label + " words (" + std::to_string(c.buckets[b].segments.size()) + " segments)";
  };
  const PlotBox box;
  const Axis x = category_axis(names, box.plot_l(), box.plot_r());
  std::vector<ChartLine> lines;
  for (std::size_t g = 0; g < c.archs.size(); ++g) {
    ChartLine line{c.archs[g].arch, arch_colour(g), {}};
    if (const auto it = c.archs[g].by_length.find(model); it != c.archs[g].by_length.end())
      for (const Spread& s : it->second) line.points.push_back(s);
    line.points.resize(c.buckets.size());
    lines.push_back(std::move(line));
  }
  return line_chart(spec, x, lines);
}

// BLEU against K (1: the test set itself, K: its probe of K sentences per line).
std::string probe_chart(const Comparison& c, const std::string& model) {
  std::vector<std::string> sets;
  for (const std::string& set : c.sets)
    if (base_set(set) == c.main_set) sets.push_back(set);
  if (sets.size() < 2) return "";
  ChartSpec spec;
  spec.id = "bleu-by-k";
  spec.title = "BLEU against input length";
  spec.subtitle = html_escape(model) + " · K sentences joined per line · mean ± sd over seeds";
  spec.x_title = "K (test sentences per input line)";
  spec.y_title = "BLEU";
  for (const std::string& set : sets) spec.x.push_back(joined_sentences(set));
  spec.point_name = [sets](std::size_t i) { return sets[i]; };
  const PlotBox box;
  Axis x = value_axis(0.0, spec.x.back() + 1.0, false, box.plot_l(), box.plot_r());
  x.ticks = spec.x;  // the K measured, not a round grid
  x.label = [](double v) { return std::to_string(static_cast<int>(std::llround(v))); };
  std::vector<ChartLine> lines;
  for (std::size_t g = 0; g < c.archs.size(); ++g) {
    ChartLine line{c.archs[g].arch, arch_colour(g), {}};
    for (const std::string& set : sets) {
      const OutputSummary* o = find_output(c.archs[g], set, model);
      line.points.push_back(o && o->bleu.n > 0 ? std::optional<Spread>(o->bleu) : std::nullopt);
    }
    lines.push_back(std::move(line));
  }
  return line_chart(spec, x, lines);
}

std::string notes_list(const Comparison& c) {
  std::string items;
  for (const std::string& n : c.notes) items += "<li>" + html_escape(n) + "</li>\n";
  for (const ArchSummary& a : c.archs)
    for (const std::string& n : a.notes)
      items += "<li data-arch=\"" + html_escape(a.arch) + "\"><b>" + html_escape(a.arch) + "</b>: " + html_escape(n) +
               "</li>\n";
  return items.empty() ? "" : "<ul class=\"notes\" id=\"comparison-notes\">\n" + items + "</ul>\n";
}

}  // namespace

std::string comparison_sections(const Comparison& c, const std::string& extra) {
  if (c.archs.empty()) return "";
  const std::string model = c.models.empty() ? "best" : c.models.front();
  std::string out = "<section class=\"card\" id=\"comparison\"><h2>Archs over seeds</h2>\n" + arch_table(c) +
                    paired_table(c) + notes_list(c) + "</section>\n" + extra;
  std::string charts;
  if (!c.buckets.empty()) charts += length_chart(c, model);
  charts += probe_chart(c, model);
  if (!charts.empty())
    out += "<section class=\"card\" id=\"length\"><h2>Quality against length</h2>\n" + chart_legend(c) +
           "<div class=\"plots\">\n" + charts + "</div></section>\n";
  return out;
}

std::string comparison_style() { return web::style(web::Asset::comparison_css); }

}  // namespace attn::report
