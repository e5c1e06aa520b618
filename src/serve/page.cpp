#include "attn/serve/page.h"

namespace attn::serve {
std::string serve_page() { return "<!doctype html><title>attn serve</title><p>attn serve: see /v1/models</p>"; }
}  // namespace attn::serve
