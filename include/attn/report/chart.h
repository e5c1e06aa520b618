// The pieces every inline-SVG plot of attn report's page shares: a plot box
// (view box and margins, in pixels), axes with "nice" ticks (linear, log, or
// named categories at equal spacing), and the frame, grid, tick labels and
// axis titles drawn from them. Curves are drawn by the pages themselves.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace attn::report {

// The view box and, inside its margins, the plot area.
struct PlotBox {
  double width = 600, height = 300, left = 62, right = 18, top = 14, bottom = 46;
  double plot_l() const { return left; }
  double plot_r() const { return width - right; }
  double plot_t() const { return top; }
  double plot_b() const { return height - bottom; }
};

struct Axis {
  double lo = 0, hi = 1;  // the data range the axis spans (log10 of it for a log axis)
  bool log = false;
  double px_lo = 0, px_hi = 1;  // where lo and hi are drawn
  std::vector<double> ticks;    // data values
  std::function<std::string(double)> label;
  double map(double v) const;
};

// Axis ticks: "nice" values (1, 2 or 5 × 10^k steps) covering [lo, hi]
// with about `target` intervals; the first and last tick bound the axis.
std::vector<double> linear_ticks(double lo, double hi, int target);

// A value axis over [lo, hi] (padded to its outer ticks; lo > 0 for a log axis).
Axis value_axis(double lo, double hi, bool log, double px_lo, double px_hi);

// Categories 0 .. names.size()-1 at equal spacing, half a step from either end, labelled by name.
Axis category_axis(std::vector<std::string> names, double px_lo, double px_hi);

// "<svg viewBox=... role="img" aria-label=...>" (the caller closes it).
std::string svg_open(const PlotBox& box, const std::string& aria_label);
// The plot area's frame.
std::string svg_frame(const PlotBox& box);
// Grid lines, tick labels and the two axis titles.
std::string svg_axes(const PlotBox& box, const Axis& x, const Axis& y, const std::string& x_title,
                     const std::string& y_title);
// "no data yet" in the middle of the plot area.
std::string svg_empty(const PlotBox& box, const std::string& text);

}  // namespace attn::report
