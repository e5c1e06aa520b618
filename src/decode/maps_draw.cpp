#include "attn/decode/maps_draw.h"

#include "attn/web/assets.h"

namespace attn::decode {

std::string page_head(const std::string& title) {
  return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         title + "</title>\n";
}

std::string maps_style() { return web::style(web::Asset::maps_css); }

std::string maps_draw_script() { return web::script(web::Asset::maps_draw_js); }

}  // namespace attn::decode
