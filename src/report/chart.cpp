#include "attn/report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/core/format.h"
#include "attn/text/html.h"

namespace attn::report {

namespace {

// Ticks 1, 2, 5 × 10^k inside [lo, hi] (positive) for a log axis; finer when the range is narrow.
std::vector<double> log_ticks(double lo, double hi) {
  for (const std::vector<double>& mantissas :
       {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<double> ticks;
    for (int k = static_cast<int>(std::floor(std::log10(lo))); k <= static_cast<int>(std::ceil(std::log10(hi))); ++k)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, k);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    if (ticks.size() >= 3) return ticks;
  }
  return {lo, hi};
}

std::string number_label(double v, double step) {
  if (step >= 1 && std::abs(v) < 9e15) return format_count(static_cast<std::int64_t>(std::llround(v)));
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  return format_fixed(v, decimals);
}

std::string px(double v) { return format_fixed(v, 1); }

}  // namespace

double Axis::map(double v) const {
  const double t = log ? std::log10(v) : v;
  return px_lo + (t - lo) / (hi - lo) * (px_hi - px_lo);
}

std::vector<double> linear_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * magnitude;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last + 0.5; ++k) ticks.push_back(k * step);
  if (ticks.size() < 2) ticks.push_back(ticks.back() + step);
  return ticks;
}

Axis value_axis(double lo, double hi, bool log, double px_lo, double px_hi) {
  Axis a;
  a.log = log;
  a.px_lo = px_lo;
  a.px_hi = px_hi;
  if (log) {
    const double pad = 0.04 * std::max(std::log10(hi) - std::log10(lo), 0.2);
    a.lo = std::log10(lo) - pad;
    a.hi = std::log10(hi) + pad;
    a.ticks = log_ticks(std::pow(10.0, a.lo), std::pow(10.0, a.hi));
    a.label = [](double v) {
      if (std::abs(v - std::round(v)) < 1e-9 * std::max(1.0, v)) return format_count(std::llround(v));
      return format_fixed(v, v >= 1 ? 1 : 2);
    };
    return a;
  }
  a.ticks = linear_ticks(lo, hi, 5);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  const double step = a.ticks.size() > 1 ? a.ticks[1] - a.ticks[0] : 1.0;
  a.label = [step](double v) { return number_label(v, step); };
  return a;
}

Axis category_axis(std::vector<std::string> names, double px_lo, double px_hi) {
  Axis a;
  a.px_lo = px_lo;
  a.px_hi = px_hi;
  a.lo = -0.5;
  a.hi = static_cast<double>(std::max<std::size_t>(names.size(), 1)) - 0.5;
  for (std::size_t i = 0; i < names.size(); ++i) a.ticks.push_back(static_cast<double>(i));
  a.label = [names = std::move(names)](double v) {
    const auto i = static_cast<std::size_t>(std::llround(v));
    return i < names.size() ? text::html_escape(names[i]) : std::string();
  };
  return a;
}

std::string svg_open(const PlotBox& box, const std::string& aria_label) {
  return "<svg viewBox=\"0 0 " + format_fixed(box.width, 0) + " " + format_fixed(box.height, 0) + "\" width=\"" +
         format_fixed(box.width, 0) + "\" height=\"" + format_fixed(box.height, 0) + "\" role=\"img\" aria-label=\"" +
         aria_label + "\">\n";
}

std::string svg_frame(const PlotBox& box) {
  return "<rect class=\"frame\" x=\"" + format_fixed(box.plot_l(), 0) + "\" y=\"" + format_fixed(box.plot_t(), 0) +
         "\" width=\"" + format_fixed(box.plot_r() - box.plot_l(), 0) + "\" height=\"" +
         format_fixed(box.plot_b() - box.plot_t(), 0) + "\"/>\n";
}

std::string svg_axes(const PlotBox& box, const Axis& x, const Axis& y, const std::string& x_title,
                     const std::string& y_title) {
  std::string out = "<g class=\"grid\">";
  for (double t : x.ticks)
    out += "<line x1=\"" + px(x.map(t)) + "\" x2=\"" + px(x.map(t)) + "\" y1=\"" + format_fixed(box.plot_t(), 0) +
           "\" y2=\"" + format_fixed(box.plot_b(), 0) + "\"/>";
  for (double t : y.ticks)
    out += "<line x1=\"" + format_fixed(box.plot_l(), 0) + "\" x2=\"" + format_fixed(box.plot_r(), 0) + "\" y1=\"" +
           px(y.map(t)) + "\" y2=\"" + px(y.map(t)) + "\"/>";
  out += "</g>\n<g class=\"ticks\">";
  for (double t : x.ticks)
    out += "<text x=\"" + px(x.map(t)) + "\" y=\"" + format_fixed(box.plot_b() + 16, 0) + "\" text-anchor=\"middle\">" +
           x.label(t) + "</text>";
  for (double t : y.ticks)
    out += "<text x=\"" + format_fixed(box.plot_l() - 6, 0) + "\" y=\"" + px(y.map(t) + 4) + "\" text-anchor=\"end\">" +
           y.label(t) + "</text>";
  out += "</g>\n";
  out += "<text class=\"axis-label\" x=\"" + format_fixed((box.plot_l() + box.plot_r()) / 2, 0) + "\" y=\"" +
         format_fixed(box.height - 8, 0) + "\" text-anchor=\"middle\">" + x_title + "</text>\n";
  out += "<text class=\"axis-label\" transform=\"translate(14 " + format_fixed((box.plot_t() + box.plot_b()) / 2, 0) +
         ") rotate(-90)\" text-anchor=\"middle\">" + y_title + "</text>\n";
  return out;
}

std::string svg_empty(const PlotBox& box, const std::string& text) {
  return "<text class=\"empty\" x=\"" + format_fixed((box.plot_l() + box.plot_r()) / 2, 0) + "\" y=\"" +
         format_fixed((box.plot_t() + box.plot_b()) / 2, 0) + "\" text-anchor=\"middle\">" + text + "</text>\n";
}

}  // namespace attn::report
