// A claims file: the claims `attn report --claims FILE` decides, as data.
// One claim per line (docs/verdicts.md):
//
//   A beats B on SET [MODEL]                  A's BLEU is higher than B's
//   A within M of B on SET [MODEL]            |A − B| < M BLEU (equivalence)
//   A slope above B on SET [MODEL]            A's BLEU falls less with the join factor k
//   A slope below B on SET [MODEL]            A's BLEU falls more with k
//   A slope within M of B on SET [MODEL]      |slope A − slope B| < M BLEU per unit of k
//   alpha P                                   the family's level (default 0.05)
//
// and claims on the attention statistics of the runs' stats/<set>.<model>.json
// (attn attn-stats), one statistic of one component and layer:
//
//   A COMPONENT layer L STATISTIC [slope] above|below TARGET on SET [MODEL]
//   A COMPONENT layer L STATISTIC [slope] within M of TARGET on SET [MODEL]
//
// COMPONENT is encoder, decoder or cross; L a layer (0-based, as the stats
// files number them), `last`, or `all` (the component's layers pooled);
// STATISTIC one of decode::kStatisticNames; TARGET is `layer L2` (A's own
// layer L2), a number (a constant), or another run group B (its same
// component, layer and statistic). With `slope`, the statistic's
// least-squares slope against the join factor k over SET and its probes.
//
// A and B name run groups as attn report groups them (the arch folder,
// "<comparison>/<arch>" when two comparisons are given); SET is a test set
// (a slope runs over SET and every SET.join<K> probe both groups have);
// MODEL is "best" (default) or "avg5". `| text` after a claim labels it;
// '#' starts a comment line. M may be written 0.5, ±0.5 or +-0.5.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::report {

// What an attention-statistic claim measures of a run group.
struct StatTerm {
  std::string component;  // "encoder", "decoder", "cross"
  std::string layer;      // "0", "1", …, "last" or "all"
  std::string statistic;  // "normalised_entropy", …
};

struct Claim {
  std::size_t line = 0;  // 1-based, in the file
  std::string text;      // the claim as written, without its label
  std::string label;     // after '|'; empty when none
  std::string a, b;      // run groups; differences are A − B
  std::string set;
  std::string model = "best";
  bool slope = false;            // of BLEU against the join factor k, not BLEU itself
  int sign = 0;                  // +1: A − B > 0 claimed; −1: A − B < 0; 0: equivalence
  std::optional<double> margin;  // equivalence claims: |A − B| < margin
  // Attention-statistic claims: A's term; B is A's own `b_layer`, the constant, or group b's same term.
  std::optional<StatTerm> stat;
  std::string b_layer;             // TARGET `layer L2`: b == a
  std::optional<double> constant;  // TARGET a number: b is empty

  bool equivalence() const { return margin.has_value(); }
  bool statistic() const { return stat.has_value(); }
  // How the two sides are named in verdicts: the groups, or for statistic
  // claims "A encoder layer 2 max_weight" and "layer 0", "0" or "B".
  std::string a_side() const;
  std::string b_side() const;
  // The label, or the claim as written.
  const std::string& title() const { return label.empty() ? text : label; }
};

struct ClaimsFile {
  std::string path;
  double alpha = 0.05;
  std::vector<Claim> claims;
};

// Throws Error "PATH:LINE: what is wrong (what a claim looks like)" for a line
// that is none of the forms above, and for a file without claims.
ClaimsFile parse_claims(std::string_view text, const std::string& path);
ClaimsFile read_claims(const std::filesystem::path& path);

}  // namespace attn::report
