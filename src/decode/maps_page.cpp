#include "attn/decode/maps_page.h"

#include <nlohmann/json.hpp>

#include "attn/decode/maps_draw.h"
#include "attn/nn/mechanism.h"
#include "attn/text/html.h"
#include "attn/web/assets.h"

namespace attn::decode {

using text::html_escape;
using text::script_safe;

std::string mechanisms_script() {
  std::string js =
      "<script>\n"
      "// Each map kind's label and its mechanism's drawing hooks (page.js in the module's folder).\n"
      "const ATTN_MECHANISMS = {};\n"
      "function attnMechanism(labels, hooks) {\n"
      "  for (const kind in labels) ATTN_MECHANISMS[kind] = Object.assign({ label: labels[kind] }, hooks);\n"
      "}\n";
  for (const nn::Mechanism* m : nn::mechanisms()) {
    nlohmann::json labels = nlohmann::json::object();
    for (const nn::MapKind& k : m->map_kinds()) labels[std::string(k.kind)] = std::string(k.label);
    js += "attnMechanism(" + labels.dump() + ",\n" + std::string(m->page_script()) + ");\n";
  }
  return js + "</script>\n";
}

MapsPageWriter::MapsPageWriter(std::FILE* out, const nlohmann::json& header) : out_(out) {
  std::fputs(page_head("attn attend — attention maps").c_str(), out_);
  std::fputs(maps_style().c_str(), out_);
  // This page's layout, then the empty frame the viewer fills.
  std::fputs(web::style(web::Asset::attend_css).c_str(), out_);
  std::fputs("</head>\n<body>\n", out_);
  std::fputs(std::string(web::text(web::Asset::attend_body_html)).c_str(), out_);
  std::fputs("<script type=\"application/json\" id=\"attn-header\">", out_);
  std::fputs(script_safe(header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).c_str(), out_);
  std::fputs("</script>\n", out_);
}

void MapsPageWriter::add(std::int64_t index, const std::string& source_line, const std::string& sentence) {
  std::fprintf(out_,
               "<script type=\"application/json\" class=\"attn-sentence\" data-index=\"%lld\" data-preview=\"%s\">",
               static_cast<long long>(index), html_escape(source_line, 70).c_str());
  std::fputs(script_safe(sentence).c_str(), out_);
  std::fputs("</script>\n", out_);
}

void MapsPageWriter::finish() {
  std::fputs(mechanisms_script().c_str(), out_);
  std::fputs(maps_draw_script().c_str(), out_);
  std::fputs(web::script(web::Asset::attend_js).c_str(), out_);
  std::fputs("</body>\n</html>\n", out_);
  std::fflush(out_);
}

}  // namespace attn::decode
