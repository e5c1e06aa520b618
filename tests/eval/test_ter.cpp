// TER against the values sacreBLEU 2.x publishes in test/test_ter.py (its
// TER() defaults: case-insensitive, tercom tokenization), one case a line,
// with sacreBLEU's tolerance of 1e-3 on the percentage.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/eval/ter.h"

using attn::eval::Ter;
using Lines = std::vector<std::string>;

TEST_CASE("corpus TER matches sacreBLEU's test_ter", "[eval][ter]") {
  const auto [hyps, refs, expected] = GENERATE(table<Lines, Lines, double>({
      {{"aaaa bbbb cccc dddd"}, {"aaaa bbbb cccc dddd"}, 0.0},  // perfect match
      {{"dddd eeee ffff"}, {"aaaa bbbb cccc"}, 1.0},            // no overlap
      {{""}, {"a"}, 1.0},                                       // empty hypothesis
      {{"a"}, {""}, 1.0},                                       // empty reference
      {{""}, {""}, 0.0},                                        // both empty: defined as 0
      {{"d e f g h a b c"}, {"a b c d e f g h"}, 1.0 / 8},      // one shift fixes it
      {{"wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .",
        "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
        "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und geben Sie Werte für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" ein .",
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .",
        "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \""},
       {"wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .",
        "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
        "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und geben Sie für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" niedrigere Werte ein .",
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .",
        "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \""},
       0.136},  // WMT dev data (2019)
  }));
  const std::vector<Lines> streams = {refs};
  CHECK(std::abs(Ter().corpus_score(hyps, streams) - 100 * expected) < 1e-3);
}

TEST_CASE("the TER signature follows sacreBLEU 2.x", "[eval][ter]") {
  const std::string version = attn::eval::signature_version();
  CHECK(Ter().signature(1) == "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:" + version);
  attn::eval::TerOptions options;
  options.case_sensitive = true;
  options.no_punct = true;
  CHECK(Ter(options).signature(-1) == "nrefs:var|case:mixed|tok:tercom|norm:no|punct:no|asian:no|version:" + version);
}

// Below: properties that follow from sacreBLEU's definition (not published values).

TEST_CASE("TER lowercases by default and removes punctuation on request", "[eval][ter]") {
  CHECK(Ter().tokenize("The  Dog, barks.  ") == "the dog, barks.");
  attn::eval::TerOptions options;
  options.case_sensitive = true;
  options.no_punct = true;
  CHECK(Ter(options).tokenize("The \"Dog\", (barks)!") == "The Dog barks");
}

TEST_CASE("TER keeps the closest reference and averages the reference lengths", "[eval][ter]") {
  const Lines refs = {"a b c d", "x y"};
  const auto stats = Ter().segment_stats("a b c d", refs);
  CHECK(stats.edits == 0.0);
  CHECK(stats.ref_length == 3.0);
  const std::vector<int> hyp = {1, 2, 3}, ref = {};
  CHECK(attn::eval::translation_edits(hyp, ref) == 3);
}
