// The page's colours. Runs on their own take the next of ten colours that
// stay apart on white and for the common kinds of colour blindness
// (Okabe–Ito, then Tableau). In a multi-seed comparison each arch has a hue
// and its seeds are shades of it, so the per-run curves read by arch.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/report/comparison.h"

namespace attn::report {

// The k-th run's colour when it is not part of an arch group.
std::string run_colour(std::size_t k);
// The colour of the g-th arch group (its charts' line, its table swatch).
std::string arch_colour(std::size_t g);
// Seed `j` (0-based within the group) of the g-th arch: a shade of arch_colour(g).
std::string seed_colour(std::size_t g, std::size_t j);

// One colour per run: the arch family's shade for a seed run, run_colour(k) otherwise.
std::vector<std::string> run_colours(std::size_t runs, const Comparison& comparison);

}  // namespace attn::report
