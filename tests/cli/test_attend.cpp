// attn attend end to end: the files it writes keep the document's promises
// and validate against docs/attention.schema.json; beam maps equal forced maps
// on the printed output; JSON Lines; bad input gets one line, exit status 2
// and no file; and, when Debian's chromium is installed, the page rendered in
// a headless browser shows layers × heads × from × to cells per component.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (as in tests/decode/test_maps.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../decode/json_schema.h"
#include "../decode/small_maps_config.h"
#include "../decode/maps_checks.h"
#include "../support.h"
#include "attn/model/model_file.h"
#include "run_attn.h"

using namespace attn;
using attn::test::require_user_error;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSources{"we watched four blue teachers .", "you find him .", "the small man sleeps .",
                                        "the old teachers watched the small dogs in the garden .", "a dog ."};
const std::vector<std::string> kTargets{"nos dokaren zelas kev ta ka gardim .", "tu el ta troves .",
                                        "ra varo pita dorma .",
                                        "ra vela gardim ka dokaren ra varo hundos en ra garten .", "un hundo ."};

std::string lines_text(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A model file with random weights and a BPE learned on the sentences above,
// so that the tokens are words and word pieces. words_only: the output layer
// is rigged so that the model says only whole words that are one piece each
// (and </s>); its printed output then reads back through the BPE to the
// tokens it emitted.
// With `favoured` (a piece), that piece wins every step instead of words until the length limit.
std::string make_model(const test::ScratchDir& dir, const std::string& name, const std::string& arch,
                       const std::string& decoder_mixer, std::uint64_t seed, bool words_only = false,
                       const std::string& favoured = "") {
  std::vector<std::string> corpus;
  for (int r = 0; r < 3; ++r) {
    corpus.insert(corpus.end(), kSources.begin(), kSources.end());
    corpus.insert(corpus.end(), kTargets.begin(), kTargets.end());
  }
  text::BpeOptions options;
  options.vocab_size = 340;
  options.min_frequency = 2;
  const text::Bpe bpe = text::Bpe::learn(corpus, options);
  model::ModelConfig c = test::small_maps_config(arch, static_cast<std::int64_t>(bpe.vocab().size()));
  c.decoder_mixer = decoder_mixer;
  c.ffn_dim = 32;
  if (words_only) {
    c.share_all_embeddings = false;
    c.share_decoder_output = false;
  }
  model::Seq2Seq m(c);
  Rng init(seed);
  m.initialize(init);
  for (float& v : m.params().values()) v *= 2.5f;  // peaked maps are easier to look at
  if (words_only) {
    // Logits = h · row with h ≈ u (a small LayerNorm gain, bias u): rows near u win, rows at −u lose.
    const std::int64_t d = c.dim;
    const std::vector<float> u = test::random_vector(static_cast<std::size_t>(d), seed + 1);
    nn::ParamStore& p = m.params();
    float* gain = p.value(p.find("dec.ln.weight"));
    float* bias = p.value(p.find("dec.ln.bias"));
    for (std::int64_t k = 0; k < d; ++k) {
      gain[k] = 0.2f;
      bias[k] = 2.0f * u[static_cast<std::size_t>(k)];
    }
    float* out = p.value(p.find("out_proj.weight"));
    const std::vector<float> noise = test::random_vector(static_cast<std::size_t>(c.vocab_size * d), seed + 2);
    for (std::int32_t w = 0; w < c.vocab_size; ++w) {
      const std::string& piece = bpe.vocab().piece(w);
      const bool word = piece.rfind(text::kWordMarkerText, 0) == 0 && piece.size() > text::kWordMarkerText.size() + 1 &&
                        bpe.encode(piece.substr(text::kWordMarkerText.size())) == std::vector<std::int32_t>{w};
      const bool wins = favoured.empty() ? word : piece == favoured;
      const float sign = wins ? 1.0f : w == text::kEos ? 0.6f : -1.0f;  // </s> a little less likely than a word
      for (std::int64_t k = 0; k < d; ++k)
        out[w * d + k] = sign * u[static_cast<std::size_t>(k)] + 0.6f * noise[static_cast<std::size_t>(w * d + k)];
    }
  }
  const fs::path path = dir.path() / name;
  model::save_model_file(path, m, bpe);
  return path.string();
}

json read_json(const fs::path& p) { return json::parse(test::slurp(p)); }

test::SchemaValidator validator() {
  return test::SchemaValidator::from_file(fs::path(__FILE__).parent_path() / ".." / ".." / "docs" /
                                          "attention.schema.json");
}

void require_valid(const json& doc) {
  const auto errors = validator().validate(doc);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  test::check_maps_document(doc);
}

// Files in a directory, by name.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("attend (cli): decode and forced runs write JSON and a page that keep the document's promises",
          "[attend][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = make_model(dir, "m.attn", "convsan2d", "muse", 3);
  const std::string src = dir.write("test.src", lines_text(kSources)),
                    tgt = dir.write("test.tgt", lines_text(kTargets));
  const fs::path json_path = dir.path() / "maps.json", html_path = dir.path() / "maps.html";

  auto r = run_attn("attend -m " + model + " -i " + src + " -t " + tgt + " -o " + json_path.string() + " --html " +
                    html_path.string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.out.empty());
  REQUIRE(r.err.find("written to " + json_path.string() + " and " + html_path.string()) != std::string::npos);
  json doc = read_json(json_path);
  require_valid(doc);
  REQUIRE(doc["mode"] == "forced");
  REQUIRE(doc["sentences"].size() == kSources.size());
  for (std::size_t i = 0; i < kSources.size(); ++i) {
    REQUIRE(doc["sentences"][i]["translation"] == kTargets[i]);
    REQUIRE(doc["sentences"][i]["logprob"].get<double>() < 0.0);
  }
  const std::string html = test::slurp(html_path);
  REQUIRE(count(html, "class=\"attn-sentence\"") == kSources.size());

  // Decoding with a beam, to stdout; only the chosen layers, heads and components.
  r = run_attn("attend -m " + model + " -i " + src +
               " --beam 3 --max-len-a 1 --max-len-b 3 --layers 1 --heads 0,3 "
               "--components decoder --precision 2");
  INFO(r.err);
  REQUIRE(r.status == 0);
  doc = json::parse(r.out);
  require_valid(doc);
  REQUIRE(doc["mode"] == "beam");
  REQUIRE(doc["precision"] == 2);
  for (const auto& s : doc["sentences"]) {
    REQUIRE(s["components"].size() == 1);
    REQUIRE(s["components"]["decoder"]["heads"] == json::array({0, 3}));
    REQUIRE(s["components"]["decoder"]["layers"].size() == 1);
    REQUIRE(s["components"]["decoder"]["layers"][0]["mechanism"] == "muse");
  }

  // Reading stdin, JSON Lines to a file: one complete document per sentence.
  const fs::path jsonl_path = dir.path() / "maps.jsonl";
  r = run_attn("attend -m " + model + " --jsonl -o " + jsonl_path.string(), lines_text(kSources));
  REQUIRE(r.status == 0);
  std::istringstream lines(test::slurp(jsonl_path));
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const json one = json::parse(line);
    require_valid(one);
    REQUIRE(one["sentences"].size() == 1);
    REQUIRE(one["sentences"][0]["index"] == n);
  }
  REQUIRE(n == kSources.size());
}

TEST_CASE("attend (cli): beam-mode maps equal forced-mode maps on the beam's printed output", "[attend][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = make_model(dir, "m.attn", "fastdisa", "", 5, true);
  std::vector<std::string> sources;
  for (int r = 0; r < 3; ++r) sources.insert(sources.end(), kSources.begin(), kSources.end());
  const std::string src = dir.write("test.src", lines_text(sources));
  auto beam = run_attn("attend -m " + model + " -i " + src + " --beam 4 --max-len-a 0 --max-len-b 4 --precision 6");
  REQUIRE(beam.status == 0);
  const json searched = json::parse(beam.out);
  std::vector<std::string> translations;
  std::size_t words = 0;
  for (const auto& s : searched["sentences"]) {
    translations.push_back(s["translation"]);
    words += s["target_tokens"].size() - 1;
  }
  INFO("first output: " << translations[0]);
  REQUIRE(words >= 2 * sources.size());  // the comparison means something
  const std::string tgt = dir.write("hyp.tgt", lines_text(translations));
  auto forced_run = run_attn("attend -m " + model + " -i " + src + " -t " + tgt + " --precision 6");
  INFO(forced_run.err);
  REQUIRE(forced_run.status == 0);
  const json forced = json::parse(forced_run.out);
  // A printed translation read back through the BPE may split differently from
  // what the model emitted; compare the sentences where it does not.
  std::size_t same = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const json &a = searched["sentences"][i], &b = forced["sentences"][i];
    if (a["target_tokens"] != b["target_tokens"]) continue;
    ++same;
    INFO("sentence " << i);
    REQUIRE(b["logprob"].get<double>() == Approx(a["logprob"].get<double>()).margin(1e-4));
    REQUIRE(b["score"].get<double>() == Approx(a["score"].get<double>()).margin(1e-4));
    const json &ca = a["components"], &cb = b["components"];
    for (const char* c : {"encoder", "decoder", "cross"})
      for (std::size_t l = 0; l < ca[c]["layers"].size(); ++l) {
        const json &wa = ca[c]["layers"][l]["weights"], &wb = cb[c]["layers"][l]["weights"];
        REQUIRE(wa.size() == wb.size());
        for (std::size_t h = 0; h < wa.size(); ++h)
          for (std::size_t r = 0; r < wa[h].size(); ++r)
            for (std::size_t k = 0; k < wa[h][r].size(); ++k)  // one unit of 10^-6: batch padding differs
              REQUIRE(std::abs(wa[h][r][k].get<double>() - wb[h][r][k].get<double>()) <= 2.5e-6);
      }
  }
  INFO(same << " of " << sources.size() << " translations read back to the same tokens");
  REQUIRE(same == sources.size());
}

TEST_CASE("attend (cli): bad input gets one line, exit status 2 and no file", "[attend][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = make_model(dir, "m.attn", "transformer", "", 7);
  const std::string src = dir.write("test.src", lines_text(kSources));
  const std::string short_tgt = dir.write("short.tgt", "one\ntwo\n");
  const std::string out = " -o " + (dir.path() / "out.json").string() + " --html " + (dir.path() / "out.html").string();
  const auto before = listing(dir.path());
  require_user_error(run_attn("attend -m " + (dir.path() / "none.attn").string() + " -i " + src + out), "none.attn");
  require_user_error(run_attn("attend -m " + model + " -i " + (dir.path() / "none.src").string() + out), "none.src");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " -t " + short_tgt + out), "2 lines");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --layers 2" + out), "--layers");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --layers one" + out), "--layers");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --heads 4" + out), "--heads");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --heads 0,,1" + out), "--heads");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --components encoder,attention" + out),
                     "--components");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --precision 0" + out), "--precision");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " -t " + src + " --beam 4" + out), "--beam");
  require_user_error(run_attn("attend -m " + model + " -i " + src + " --beam 0" + out), "--beam");
  require_user_error(run_attn("attend -i " + src + out), "--model");
  REQUIRE(listing(dir.path()) == before);  // nothing written, no temporary left behind
}

TEST_CASE("attend (cli): headless chromium renders layers × heads × from × to cells per component",
          "[attend][cli][browser][e2e]") {
  const fs::path chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) {
    ATTN_SKIP("chromium is not installed (apt-get install chromium)");
  }
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const fs::path out_dir = fs::absolute(fs::path(bin).parent_path() / "test-output" / "attend");
  fs::create_directories(out_dir);
  test::ScratchDir dir;
  const std::string src = dir.write("test.src", lines_text(kSources)),
                    tgt = dir.write("test.tgt", lines_text(kTargets));

  // Runs chromium on the page with a URL hash; returns the DOM after the script ran.
  auto browse = [&](const fs::path& page, const std::string& hash, const std::string& action) {
    const fs::path dom = dir.path() / "dom.html";
    const std::string cmd = "timeout 120 " + chromium.string() +
                            " --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars" +
                            " --user-data-dir=" + (dir.path() / "profile").string() +
                            " --virtual-time-budget=2000 --window-size=1500,1100 " + action + " 'file://" +
                            page.string() + "#" + hash + "' >" + dom.string() + " 2>/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    return test::slurp(dom);
  };

  struct Page {
    const char* name;
    const char* arch;
    const char* decoder_mixer;
    const char* screenshot_hash;
  };
  for (const Page& p : {Page{"convsan2d-muse", "convsan2d", "muse", "component=encoder&layer=0&head=1"},
                        Page{"fastdisa", "fastdisa", "", "component=encoder&layer=1&head=2"}}) {
    INFO(p.name);
    const std::string model = make_model(dir, std::string(p.name) + ".attn", p.arch, p.decoder_mixer, 9);
    const fs::path page = out_dir / (std::string(p.name) + ".html");
    const fs::path json_path = out_dir / (std::string(p.name) + ".json");
    const auto r = run_attn("attend -m " + model + " -i " + src + " -t " + tgt + " -o " + json_path.string() +
                            " --html " + page.string());
    REQUIRE(r.status == 0);
    const json doc = read_json(json_path);
    const json& s0 = doc["sentences"][0];
    for (const char* component : {"encoder", "decoder", "cross"}) {
      if (std::string(p.name) == "fastdisa" && std::string(component) == "decoder") continue;  // one page is enough
      INFO("component " << component);
      const std::string dom = browse(page, std::string("component=") + component, "--dump-dom");
      REQUIRE(dom.find("data-component=\"" + std::string(component) + "\"") != std::string::npos);
      const json& comp = s0["components"][component];
      const std::size_t cells = comp["layers"].size() * comp["heads"].size() *
                                test::tokens_of(s0, comp["from"]).size() * test::tokens_of(s0, comp["to"]).size();
      REQUIRE(cells > 0);
      REQUIRE(count(dom, "<rect class=\"c\"") == cells);
      // The large view shows one map: from × to cells.
      REQUIRE(count(dom, "<rect class=\"d\"") ==
              test::tokens_of(s0, comp["from"]).size() * test::tokens_of(s0, comp["to"]).size());
    }
    // Hover: the pointer over the largest weight of row 0 of the large map shows that weight.
    if (std::string(p.name) == "convsan2d-muse") {
      const json& row = s0["components"]["encoder"]["layers"][0]["weights"][0][0];
      std::size_t best = 0;
      for (std::size_t j = 0; j < row.size(); ++j)
        if (row[j].get<double>() > row[best].get<double>()) best = j;
      char want[32];
      std::snprintf(want, sizeof want, "%.4f", row[best].get<double>());
      std::string html = test::slurp(page);
      html.insert(html.rfind("</body>"),
                  "<script>(function () {\n"
                  "  const svg = document.querySelector('svg.map.big'), r = svg.getBoundingClientRect();\n"
                  "  const s = +svg.dataset.s, x = +svg.dataset.x, y = +svg.dataset.y;\n"
                  "  svg.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + x + (" +
                      std::to_string(best) +
                      " + 0.5) * s, clientY: r.top + y + 0.5 * s}));\n"
                      "  document.body.setAttribute('data-probe', document.getElementById('tip').textContent);\n"
                      "})();</script>\n");
      const fs::path probe = dir.path() / "probe.html";
      std::ofstream(probe, std::ios::binary) << html;
      const std::string dom = browse(probe, "component=encoder&layer=0&head=0", "--dump-dom");
      const std::size_t at = dom.find("data-probe=\"");
      REQUIRE(at != std::string::npos);
      const std::string tip = dom.substr(at, dom.find('"', at + 12) - at);
      INFO("tooltip: " << tip);
      REQUIRE(tip.find(want) != std::string::npos);
      REQUIRE(tip.find(s0["source_tokens"][best].get<std::string>()) != std::string::npos);
      // The contrast is part of the link, as the component, layer and head are.
      html = test::slurp(page);
      html.insert(html.rfind("</body>"),
                  "<script>document.body.setAttribute('data-probe', document.querySelector('#scale button.on')"
                  ".dataset.k + ' ' + location.hash);</script>\n");
      std::ofstream(probe, std::ios::binary) << html;
      const std::string linked = browse(probe, "component=encoder&layer=0&head=1&scale=sqrt", "--dump-dom");
      const std::size_t kept = linked.find("data-probe=\"");
      REQUIRE(kept != std::string::npos);
      REQUIRE(linked.substr(kept + 12, linked.find('"', kept + 12) - kept - 12) ==
              "sqrt #component=encoder&amp;sentence=0&amp;layer=0&amp;head=1&amp;scale=sqrt");
    }
    const fs::path shot = out_dir / (std::string(p.name) + ".png");
    fs::remove(shot);
    browse(page, p.screenshot_hash, "--screenshot=" + shot.string());
    REQUIRE(fs::exists(shot));
    REQUIRE(fs::file_size(shot) > 10000);
  }
}

TEST_CASE("translate: a model that emits line breaks still writes one line per input", "[cli][decode][e2e]") {
  test::ScratchDir dir;
  // Its favourite piece is the byte 0x0A: every hypothesis is a run of line breaks.
  const std::string model = make_model(dir, "newline.attn", "transformer", "", 11, true, "<0x0A>");
  const auto r = run_attn("translate -m " + model + " --beam 2", "red cat\nblue dog sees\n");
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  REQUIRE(r.out.find(' ') != std::string::npos);  // the breaks became spaces
  const auto nbest = run_attn("translate -m " + model + " --beam 2 --nbest 2", "red cat\n");
  REQUIRE(std::count(nbest.out.begin(), nbest.out.end(), '\n') == 2);
}

TEST_CASE("attend (cli): without --beam it decodes as translate does (beam 5), the maps of the best hypothesis",
          "[attend][cli][e2e]") {
  test::ScratchDir dir;
  const std::string model = make_model(dir, "m.attn", "transformer", "", 5, true);
  const std::string src = dir.write("test.src", lines_text(kSources));
  const auto maps = run_attn("attend -m " + model + " -i " + src);
  INFO(maps.err);
  REQUIRE(maps.status == 0);
  const json doc = json::parse(maps.out);
  REQUIRE(doc["mode"] == "beam");
  REQUIRE(doc["search"]["beam"] == 5);
  const auto translated = run_attn("translate -m " + model + " -i " + src);
  REQUIRE(translated.status == 0);
  std::string lines;
  for (const auto& s : doc["sentences"]) lines += s["translation"].get<std::string>() + "\n";
  REQUIRE(lines == translated.out);
}
