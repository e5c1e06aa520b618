#include "attn/web/assets.h"

#include "attn/core/embed.h"

namespace attn::web {

ATTN_EMBED(attn_web_maps_css, "src/web/maps.css");
ATTN_EMBED(attn_web_maps_draw_js, "src/web/maps_draw.js");
ATTN_EMBED(attn_web_attend_css, "src/web/attend.css");
ATTN_EMBED(attn_web_attend_body_html, "src/web/attend_body.html");
ATTN_EMBED(attn_web_attend_js, "src/web/attend.js");
ATTN_EMBED(attn_web_serve_css, "src/web/serve.css");
ATTN_EMBED(attn_web_serve_body_html, "src/web/serve_body.html");
ATTN_EMBED(attn_web_serve_js, "src/web/serve.js");
ATTN_EMBED(attn_web_report_css, "src/web/report.css");
ATTN_EMBED(attn_web_report_js, "src/web/report.js");
ATTN_EMBED(attn_web_comparison_css, "src/web/comparison.css");

std::string_view text(Asset asset) {
  switch (asset) {
    case Asset::maps_css: return ATTN_EMBEDDED(attn_web_maps_css);
    case Asset::maps_draw_js: return ATTN_EMBEDDED(attn_web_maps_draw_js);
    case Asset::attend_css: return ATTN_EMBEDDED(attn_web_attend_css);
    case Asset::attend_body_html: return ATTN_EMBEDDED(attn_web_attend_body_html);
    case Asset::attend_js: return ATTN_EMBEDDED(attn_web_attend_js);
    case Asset::serve_css: return ATTN_EMBEDDED(attn_web_serve_css);
    case Asset::serve_body_html: return ATTN_EMBEDDED(attn_web_serve_body_html);
    case Asset::serve_js: return ATTN_EMBEDDED(attn_web_serve_js);
    case Asset::report_css: return ATTN_EMBEDDED(attn_web_report_css);
    case Asset::report_js: return ATTN_EMBEDDED(attn_web_report_js);
    case Asset::comparison_css: return ATTN_EMBEDDED(attn_web_comparison_css);
  }
  return {};
}

std::string style(Asset asset) { return "<style>\n" + std::string(text(asset)) + "</style>\n"; }

std::string script(Asset asset) { return "<script>\n" + std::string(text(asset)) + "</script>\n"; }

}  // namespace attn::web
