// The pages' files are built into the binary as they are on disk: the embedded
// text of each is its file under src/web/, byte for byte (so a stale object
// after an edit fails here), and the tags around it are added once.
#include <filesystem>

#include "attn/web/assets.h"
#include "../cli/run_attn.h"

namespace fs = std::filesystem;
using attn::web::Asset;

TEST_CASE("web assets: each embedded file is its file under src/web/, byte for byte", "[web]") {
  const fs::path dir = fs::path(__FILE__).parent_path() / ".." / ".." / "src" / "web";
  const std::pair<Asset, const char*> files[] = {{Asset::maps_css, "maps.css"},
                                                 {Asset::maps_draw_js, "maps_draw.js"},
                                                 {Asset::attend_css, "attend.css"},
                                                 {Asset::attend_body_html, "attend_body.html"},
                                                 {Asset::attend_js, "attend.js"},
                                                 {Asset::serve_css, "serve.css"},
                                                 {Asset::serve_body_html, "serve_body.html"},
                                                 {Asset::serve_js, "serve.js"},
                                                 {Asset::report_css, "report.css"},
                                                 {Asset::report_js, "report.js"},
                                                 {Asset::comparison_css, "comparison.css"}};
  for (const auto& [asset, name] : files) {
    INFO(name);
    const std::string on_disk = attn::test::slurp(dir / name);
    REQUIRE(!on_disk.empty());
    REQUIRE(attn::web::text(asset) == on_disk);
  }
  REQUIRE(attn::web::style(Asset::report_css) == "<style>\n" + attn::test::slurp(dir / "report.css") + "</style>\n");
  REQUIRE(attn::web::script(Asset::report_js) == "<script>\n" + attn::test::slurp(dir / "report.js") + "</script>\n");
}
