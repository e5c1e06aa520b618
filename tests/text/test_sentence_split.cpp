// split_sentences: one golden case per line (sentence ends, abbreviations,
// initials, ordinals, quotes, non-Latin capitals, nothing to split).
#include <string>
#include <vector>

#include "../support.h"
#include "attn/text/sentence_split.h"

using attn::text::split_sentences;
using Sentences = std::vector<std::string>;

TEST_CASE("split_sentences: golden cases", "[text][split]") {
  struct Case {
    const char* line;
    Sentences want;
  };
  const Case cases[] = {
      {"Ein Hund läuft. Zwei Katzen schlafen.", {"Ein Hund läuft.", "Zwei Katzen schlafen."}},
      {"Wo ist er? Hier! Da.", {"Wo ist er?", "Hier!", "Da."}},
      {"Er kam z.B. am Montag. Dann ging er.", {"Er kam z.B. am Montag.", "Dann ging er."}},
      {"Dr. Müller kommt. Mr. Smith too.", {"Dr. Müller kommt.", "Mr. Smith too."}},
      {"J. K. Rowling wrote it. It sold.", {"J. K. Rowling wrote it.", "It sold."}},
      {"Am 3. Oktober feiern wir. Alle kommen.", {"Am 3. Oktober feiern wir.", "Alle kommen."}},
      {"Made in the U.S. Today it is gone.", {"Made in the U.S. Today it is gone."}},
      {"Er sagte: „Komm.“ Sie kam.", {"Er sagte: „Komm.“", "Sie kam."}},
      {"He said \"go.\" She went.", {"He said \"go.\"", "She went."}},
      {"a dog runs. a cat sleeps.", {"a dog runs. a cat sleeps."}},  // no capital: no split
      {"Wait... Then go.", {"Wait...", "Then go."}},
      {"Ende. Ärger folgt. Éclair.", {"Ende.", "Ärger folgt.", "Éclair."}},
      {"Это кот. Это пёс.", {"Это кот.", "Это пёс."}},
      {"  padded line.  ", {"  padded line.  "}},  // one sentence: the line itself, as without splitting
      {"one sentence without a stop", {"one sentence without a stop"}},
      {"", {""}},
      {"3.5 Liter. 2 Hunde.", {"3.5 Liter.", "2 Hunde."}},
      {"Version 2. Mehr folgt.", {"Version 2. Mehr folgt."}},  // a number before the stop: kept (ordinal)
  };
  for (const Case& c : cases) {
    INFO(c.line);
    REQUIRE(split_sentences(c.line) == c.want);
  }
}

TEST_CASE("sentence_units: each sentence with its line and place; without splitting, the lines", "[text][split]") {
  const std::vector<std::string> lines = {"Ein Hund läuft. Eine Katze schläft.", "", "Zwei Männer."};
  const attn::text::SentenceUnits split = attn::text::sentence_units(lines, true);
  REQUIRE(split.texts == std::vector<std::string>{"Ein Hund läuft.", "Eine Katze schläft.", "", "Zwei Männer."});
  REQUIRE(split.places.size() == 4);
  const std::int64_t want[4][2] = {{0, 0}, {0, 1}, {1, 0}, {2, 0}};
  for (std::size_t u = 0; u < 4; ++u) {
    REQUIRE(split.places[u].line == want[u][0]);
    REQUIRE(split.places[u].sentence == want[u][1]);
  }
  const attn::text::SentenceUnits whole = attn::text::sentence_units(lines, false);
  REQUIRE(whole.texts == lines);
  REQUIRE(whole.places.size() == 3);
  REQUIRE(whole.places[2].line == 2);
  REQUIRE(whole.places[2].sentence == 0);
}
