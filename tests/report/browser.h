// Headless Chromium for the report tests: a page is opened with a probe
// script added before </body> that writes what the browser laid out into
// the body's data-probe attribute, which the DOM dump carries back; and a
// screenshot of the page itself.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../cli/run_attn.h"

namespace attn::test {

inline const std::filesystem::path kChromium = "/usr/bin/chromium";

// Runs Chromium on `file` with `action` (--dump-dom, --screenshot=PNG) in a window of `window`
// ("WIDTH,HEIGHT") pixels; returns its standard output.
inline std::string browse(const std::filesystem::path& scratch, const std::filesystem::path& file,
                          const std::string& action, const std::string& window = "1400,1700") {
  const std::filesystem::path dom = scratch / "dom.html";
  const std::string cmd = "timeout 120 " + kChromium.string() +
                          " --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars --user-data-dir=" +
                          (scratch / "profile").string() + " --virtual-time-budget=2000 --window-size=" + window + " " +
                          action + " 'file://" + file.string() + "' >" + dom.string() + " 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return slurp(dom);
}

// The page at `page` with `probe_js` (a script body that sets document.body's data-probe) run in Chromium;
// returns the probe's text and puts the DOM dump in `dom`.
inline std::string probe_page(const std::filesystem::path& scratch, const std::filesystem::path& page,
                              const std::string& probe_js, std::string& dom) {
  std::string html = slurp(page);
  html.insert(html.rfind("</body>"), "<script>(function () {\n" + probe_js + "})();</script>\n");
  const std::filesystem::path probe = scratch / "probe.html";
  std::ofstream(probe, std::ios::binary) << html;
  dom = browse(scratch, probe, "--dump-dom");
  const std::size_t at = dom.find("data-probe=\"");
  REQUIRE(at != std::string::npos);
  return dom.substr(at + 12, dom.find('"', at + 12) - at - 12);
}

// A screenshot of `page` at `shot` (removed first), checked to exist and not be blank-small.
inline void screenshot(const std::filesystem::path& scratch, const std::filesystem::path& page,
                       const std::filesystem::path& shot) {
  std::filesystem::remove(shot);
  browse(scratch, page, "--screenshot=" + shot.string());
  REQUIRE(std::filesystem::exists(shot));
  REQUIRE(std::filesystem::file_size(shot) > 10000);
}

}  // namespace attn::test
