// The JavaScript, CSS and HTML of attn's pages, as real files under src/web/
// built into the binary (core/embed.h): the map drawing and style both map
// pages share, attn attend's and attn serve's pages, attn report's style and
// script. A mechanism's own drawing is in its module (nn/mechanism.h).
#pragma once
#include <string>
#include <string_view>

namespace attn::web {

enum class Asset {
  maps_css,          // maps, thumbnails, badges, strips, tooltip, header, legend (decode/maps_draw.h)
  maps_draw_js,      // attnMapsDrawer and attnTooltip (decode/maps_draw.h)
  attend_css,        // attn attend --html: layout
  attend_body_html,  // … the empty frame the viewer fills
  attend_js,         // … the viewer
  serve_css,         // attn serve's page: layout
  serve_body_html,   // … the form and the empty frame
  serve_js,          // … the client of the API
  report_css,        // attn report
  report_js,         // … hovering a run brings its curves forward
  comparison_css,    // … the comparison over seeds
};

// The file's text.
std::string_view text(Asset asset);
// The file in a <style> or <script> element (each tag on its own line).
std::string style(Asset asset);
std::string script(Asset asset);

}  // namespace attn::web
