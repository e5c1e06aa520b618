// The page `attn attend --html` writes: one self-contained HTML file (no
// network, no external script) that draws the maps of maps.h as heat maps —
// a layer × head grid per component, a large view of one map with the tokens
// on both axes and hover values, and each mechanism's extras (MUSE kernel
// gate and convolution taps, ConvSAN window outlines and head area,
// Fast-DiSA directions and fusion gate).
//
// The sentences are embedded as they arrive, each as its own
// <script type="application/json"> block that the viewer parses only when the
// sentence is shown, so the page is written in one pass with one sentence in
// memory and opens quickly even for long files. The URL hash chooses what is
// shown: #component=cross&sentence=3&layer=1&head=0.
//
// The maps are drawn by maps_draw.h's script, which attn serve's page
// (serve/page.h) shares.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace attn::decode {

class MapsPageWriter {
 public:
  // header: maps_header(...); written at once with the page's head and style.
  MapsPageWriter(std::FILE* out, const nlohmann::json& header);
  // sentence: the text of sentence_json(...); source_line labels the sentence menu.
  void add(std::int64_t index, const std::string& source_line, const std::string& sentence);
  // Writes the viewer script and closes the document.
  void finish();

 private:
  std::FILE* out_;
};

// <script> defining ATTN_MECHANISMS: each map kind's label and its
// mechanism's drawing hooks (Mechanism::page_script, nn/mechanism.h), from the
// registry. The drawing code of both pages (maps_draw.h) calls them.
std::string mechanisms_script();

}  // namespace attn::decode
