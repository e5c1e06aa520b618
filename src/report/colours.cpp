#include "attn/report/colours.h"

namespace attn::report {

namespace {

constexpr const char* kColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
                                    "#56b4e9", "#7f3c8d", "#3b3b3b", "#b8860b", "#4e79a7"};

// Hue and saturation of each arch: Okabe–Ito's blue, vermilion, green, purple-pink, orange, then
// violet, grey, teal, olive, red.
struct Hue {
  int hue, saturation;
};
constexpr Hue kHues[] = {{205, 100}, {25, 100}, {164, 100}, {327, 45}, {41, 100},
                         {280, 45},  {0, 0},    {185, 70},  {75, 60},  {355, 70}};
constexpr std::size_t kHueCount = sizeof kHues / sizeof kHues[0];

std::string hsl(const Hue& h, int lightness) {
  return "hsl(" + std::to_string(h.hue) + "," + std::to_string(h.saturation) + "%," + std::to_string(lightness) + "%)";
}

}  // namespace

std::string run_colour(std::size_t k) { return kColours[k % (sizeof kColours / sizeof kColours[0])]; }

std::string arch_colour(std::size_t g) { return hsl(kHues[g % kHueCount], 38); }

std::string seed_colour(std::size_t g, std::size_t j) {
  static constexpr int kLightness[] = {30, 42, 54, 66, 24, 48, 60};
  return hsl(kHues[g % kHueCount], kLightness[j % (sizeof kLightness / sizeof kLightness[0])]);
}

std::vector<std::string> run_colours(std::size_t runs, const Comparison& comparison) {
  std::vector<std::string> colours;
  for (std::size_t k = 0; k < runs; ++k) colours.push_back(run_colour(k));
  for (std::size_t g = 0; g < comparison.archs.size(); ++g)
    for (std::size_t j = 0; j < comparison.archs[g].runs.size(); ++j)
      if (comparison.archs[g].runs[j] < runs) colours[comparison.archs[g].runs[j]] = seed_colour(g, j);
  return colours;
}

}  // namespace attn::report
