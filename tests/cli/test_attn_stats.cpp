// attn attn-stats end to end: on a tiny trained model over data/toy's test
// set, the table has a line per component, layer and head, and the JSON
// parses and has every one of them with the numbers in range; teacher forcing
// and the model's own output; a Fast-DiSA model's strict heads; bad input gets
// one line, exit status 2 and no file. The JSON validates against
// docs/attention-stats.schema.json.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../decode/json_schema.h"
#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"
#include "tiny_model.h"

using namespace attn;
using attn::test::require_user_error;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kToy = fs::path(__FILE__).parent_path() / ".." / ".." / "data" / "toy";

// The first n lines of a file, written into dir as `name`.
std::string head_lines(const test::ScratchDir& dir, const fs::path& from, const std::string& name, int n) {
  std::ifstream in(from);
  std::string text, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) text += line + "\n";
  return dir.write(name, text);
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Valid against docs/attention-stats.schema.json, with every component, layer
// and head of a model with `layers` layers of `heads` heads, numbers in range.
void require_complete(const json& doc, std::size_t layers, std::size_t heads) {
  const auto errors =
      test::SchemaValidator::from_file(kToy / ".." / ".." / "docs" / "attention-stats.schema.json").validate(doc);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  REQUIRE(doc["format"] == "attn-attention-stats");
  REQUIRE(doc["version"] == 2);
  for (const char* name : {"encoder", "decoder", "cross"}) {
    INFO(name);
    const json& comp = doc["components"][name];
    REQUIRE(comp["layers"].size() == layers);
    for (const json& layer : comp["layers"]) {
      REQUIRE(layer["heads"].size() == heads);
      REQUIRE(layer["all_heads"]["rows"].get<std::int64_t>() > 0);
      for (const json& h : layer["heads"]) {
        for (const char* key : {"entropy", "normalised_entropy", "max_weight", "distance", "mass_within"})
          REQUIRE(h[key].is_number());
        REQUIRE(h["normalised_entropy"].get<double>() >= 0.0);
        REQUIRE(h["normalised_entropy"].get<double>() <= 1.0 + 1e-6);
        REQUIRE(h["max_weight"].get<double>() <= 1.0 + 1e-6);
        REQUIRE(h["mass_within"].get<double>() <= 1.0 + 1e-6);
      }
    }
  }
}

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("attn-stats (cli): a tiny model over data/toy: the table and JSON of every kind, layer and head",
          "[attn-stats][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = test::tiny_model(dir);
  const std::string src = head_lines(dir, kToy / "test.src", "test.src", 60),
                    tgt = head_lines(dir, kToy / "test.tgt", "test.tgt", 60);
  const fs::path out = dir / "stats.json";
  auto r = run_attn(test::shell_words({"attn-stats", "-m", model, "-i", src, "-t", tgt, "-o", out.string()}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(test::slurp(out));
  require_complete(doc, 1, 2);  // tiny_train_args: --layers 1 --heads 2
  CHECK(doc["mode"] == "forced");
  CHECK(doc["sentences"] == 60);
  CHECK(doc["within"] == 2);
  // The table: one line per component, layer and head, and per layer the heads pooled ("all").
  for (const char* name : {"encoder ", "decoder ", "cross "}) CHECK(count_lines_starting(r.out, name) == 3);
  CHECK(r.out.find("teacher-forced references") != std::string::npos);

  // The model's own greedy output, JSON on stdout, another window.
  r = run_attn(test::shell_words({"attn-stats", "-m", model, "-i", src, "--decode", "--beam", "1", "--within", "0",
                                  "-o", "-", "--batch-size", "7"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json greedy = json::parse(r.out);
  require_complete(greedy, 1, 2);
  CHECK(greedy["mode"] == "greedy");
  CHECK(greedy["within"] == 0);
  CHECK(greedy["search"]["beam"] == 1);
  // The encoder reads the same sources either way: its statistics do not depend on the targets.
  const json& a = doc["components"]["encoder"]["layers"][0]["all_heads"];
  const json& b = greedy["components"]["encoder"]["layers"][0]["all_heads"];
  CHECK(a["rows"] == b["rows"]);
  CHECK(a["entropy"].get<double>() == Approx(b["entropy"].get<double>()).margin(1e-5));
}

TEST_CASE("attn-stats (cli): Fast-DiSA's strict directions leave the first or last row of a head without keys",
          "[attn-stats][cli][e2e]") {
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 60, 5);
  test::write_tiny_corpus(dir.path(), "valid", 5, 6);
  auto r = run_attn(test::shell_words(test::tiny_train_args(dir.path(), "run",
                                                            {"--max-updates", "1", "--arch", "fastdisa"})));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string model = (dir.path() / "run" / "last.attn").string();
  const std::string src = (dir.path() / "valid.src").string(), tgt = (dir.path() / "valid.tgt").string();
  r = run_attn(test::shell_words({"attn-stats", "-m", model, "-i", src, "-t", tgt, "-o", "-"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  require_complete(doc, 1, 2);
  const json& enc = doc["components"]["encoder"]["layers"][0];
  CHECK(enc["mechanism"] == "fastdisa");
  // Five sentences: each head has one query with no key at all (forward: the first token; backward: the last).
  for (const json& h : enc["heads"]) CHECK(h["empty_rows"] == 5);
  // The causal decoder: the first position sees only itself.
  for (const json& h : doc["components"]["decoder"]["layers"][0]["heads"]) CHECK(h["single_key_rows"] == 5);
}

TEST_CASE("attn-stats (cli): --per-sentence: each input line's sums, in input order, adding up to the totals",
          "[attn-stats][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = test::tiny_model(dir);
  // 30 lines of the toy test set, and the same lines in reverse order (batched in another order too).
  std::vector<std::string> src_lines, tgt_lines;
  {
    std::ifstream s(kToy / "test.src"), t(kToy / "test.tgt");
    std::string a, b;
    for (int i = 0; i < 30 && std::getline(s, a) && std::getline(t, b); ++i) {
      src_lines.push_back(a);
      tgt_lines.push_back(b);
    }
  }
  src_lines[3].clear();  // an empty source: not run, its line all zeros
  const auto write = [&](const std::string& name, std::vector<std::string> lines, bool reversed) {
    if (reversed) std::reverse(lines.begin(), lines.end());
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    return dir.write(name, text);
  };
  const auto stats = [&](bool reversed, const std::string& batch) {
    const std::string tag = reversed ? "r" : "f";
    auto r = run_attn(test::shell_words({"attn-stats", "-m", model, "-i", write(tag + ".src", src_lines, reversed),
                                         "-t", write(tag + ".tgt", tgt_lines, reversed), "--per-sentence", "-o", "-",
                                         "--batch-size", batch}));
    INFO(r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  };
  const json forward = stats(false, "16"), backward = stats(true, "7");
  require_complete(forward, 1, 2);
  require_complete(backward, 1, 2);
  const json& per = forward["per_sentence"];
  REQUIRE(per["lines"] == 30);
  for (const char* name : {"encoder", "decoder", "cross"}) {
    INFO(name);
    const json& layer = per[name][0];
    const json& all = forward["components"][name]["layers"][0]["all_heads"];
    REQUIRE(layer["rows"].size() == 30);
    CHECK(layer["rows"][3] == 0);
    std::int64_t rows = 0;
    for (const json& n : layer["rows"]) rows += n.get<std::int64_t>();
    CHECK(rows == all["rows"].get<std::int64_t>());
    for (const char* statistic : {"entropy", "normalised_entropy", "max_weight", "distance", "mass_within"}) {
      INFO(statistic);
      double sum = 0.0;
      for (const json& x : layer[statistic]) sum += x.get<double>();
      CHECK(sum / static_cast<double>(rows) == Approx(all[statistic].get<double>()).margin(1e-5));
      // Line i of the input is line 29 − i of the reversed input.
      for (std::size_t i = 0; i < 30; ++i)
        CHECK(layer[statistic][i].get<double>() ==
              Approx(backward["per_sentence"][name][0][statistic][29 - i].get<double>()).margin(2e-4));
    }
  }
  // Without --per-sentence the section is absent; without -o there is no JSON to put it in.
  auto r = run_attn(test::shell_words({"attn-stats", "-m", model, "-i", write("f.src", src_lines, false), "-t",
                                       write("f.tgt", tgt_lines, false), "-o", "-"}));
  REQUIRE(r.status == 0);
  CHECK_FALSE(json::parse(r.out).contains("per_sentence"));
  require_user_error(run_attn(test::shell_words({"attn-stats", "-m", model, "-i", write("f.src", src_lines, false),
                                                 "-t", write("f.tgt", tgt_lines, false), "--per-sentence"})),
                     "--per-sentence");
}

TEST_CASE("attn-stats (cli): bad input gets one line, exit status 2 and no file", "[attn-stats][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = test::tiny_model(dir);
  const std::string src = (dir.path() / "valid.src").string(), tgt = (dir.path() / "valid.tgt").string();
  const std::string short_tgt = dir.write("short.tgt", "one\ntwo\n");
  const std::string out = (dir.path() / "out.json").string();
  const auto before = listing(dir.path());
  const auto run = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all{"attn-stats"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"-o", out});
    return run_attn(test::shell_words(all));
  };
  require_user_error(run({"-m", (dir.path() / "none.attn").string(), "-i", src, "-t", tgt}), "none.attn");
  require_user_error(run({"-m", model, "-i", (dir.path() / "none.src").string(), "-t", tgt}), "none.src");
  require_user_error(run({"-m", model, "-i", src, "-t", (dir.path() / "none.tgt").string()}), "none.tgt");
  require_user_error(run({"-m", model, "-i", src, "-t", short_tgt}), "2 lines");
  require_user_error(run({"-m", model, "-i", src}), "--decode");
  require_user_error(run({"-m", model, "-i", src, "-t", tgt, "--decode"}), "--decode");
  require_user_error(run({"-m", model, "-i", src, "-t", tgt, "--beam", "3"}), "--decode");
  require_user_error(run({"-m", model, "-i", src, "-t", tgt, "--within", "-1"}), "--within");
  require_user_error(run({"-m", model, "-i", src, "-t", tgt, "--within", "two"}), "--within");
  require_user_error(run({"-m", model, "-i", src, "-t", tgt, "--batch-size", "0"}), "--batch-size");
  require_user_error(run({"-m", model, "-i", src, "--decode", "--beam", "0"}), "--beam");
  require_user_error(run({"-i", src, "-t", tgt}), "--model");
  require_user_error(run_attn(test::shell_words({"attn-stats", "-m", model, "-i", src, "-t", tgt, "-o", src})), "-o");
  require_user_error(
      run_attn(test::shell_words({"attn-stats", "-m", model, "-i", src, "-t", tgt, "-o", dir.path().string()})), "-o");
  REQUIRE(listing(dir.path()) == before);  // nothing written, no temporary left behind
}
