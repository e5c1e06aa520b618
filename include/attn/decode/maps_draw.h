// The one place that draws attention maps in a browser. Both pages that show
// maps — the offline page of `attn attend --html` (maps_page.h) and the page
// of `attn serve` (serve/page.h) — put these two blocks in their document and
// call the same functions, so a map, its masks and its mechanism extras look
// and read the same on both.
//
// The script defines two globals (it needs ATTN_MECHANISMS, mechanisms_script()).
// Its text is src/web/maps_draw.js and the style's src/web/maps.css (web/assets.h):
//
//   attnMapsDrawer(view, precision) → drawer
//     view: the page's selection {component, layer, head, scale}, read at
//     every call (layer, head: indices into a component's layers and heads
//     arrays; scale: "linear" or "sqrt"); precision: the document's decimals.
//     The drawer takes S, one sentence object of the attend document
//     (docs/attention-json.md), and returns HTML:
//       gridHTML(S, width[, {labelWidth, title}])  the layer × head thumbnails
//                                           (figure.thumb[data-l][data-h]);
//                                           gridBasis(S): the width it would like
//       detailHTML(S, width[, {cell, narrowStrips}])  the large map of the
//                                           selection with the tokens and the
//                                           extras' strips; detailCell(S, width):
//                                           its cell size (px) in that width
//       hover(S, svg, clientX, clientY)     the tooltip's HTML for a point over
//                                           one of those svg.map, or ""
//     and the pieces they are made of (colour ramp, cells, masks, labels,
//     fmt, esc). What a mechanism adds — its mask, outline, badge, layer
//     summary, side strips and their tooltips — is drawn by the hooks of its
//     module (Mechanism::page_script, nn/mechanism.h), which the drawer calls
//     for each layer by its mechanism; this code never reads an extra itself.
//   attnTooltip(tip, find)
//     one tooltip element for every svg.map on the page; find(svg) returns
//     [drawer, S] for the map's sentence, or null.
#pragma once
#include <string>

namespace attn::decode {

// The document's start up to and including <title> (plain text, not escaped).
std::string page_head(const std::string& title);

// <style> for the page header (header.top), maps, thumbnails, badges, gate
// bars, side strips, the tooltip (#tip), the component tabs and the colour legend.
std::string maps_style();

// <script> defining attnMapsDrawer and attnTooltip (above).
std::string maps_draw_script();

}  // namespace attn::decode
