#include "attn/serve/page.h"

#include "attn/decode/maps_draw.h"
#include "attn/decode/maps_page.h"
#include "attn/web/assets.h"

namespace attn::serve {

std::string serve_page() {
  using web::Asset;
  return decode::page_head("attn serve — compare attention") + decode::maps_style() + web::style(Asset::serve_css) +
         "</head>\n<body data-state=\"idle\">\n" + std::string(web::text(Asset::serve_body_html)) +
         decode::mechanisms_script() + decode::maps_draw_script() + web::script(Asset::serve_js) + "</body>\n</html>\n";
}

}  // namespace attn::serve
