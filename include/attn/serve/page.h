// The page `attn serve` answers at / (placeholder until the page lands).
#pragma once
#include <string>

namespace attn::serve {
std::string serve_page();
}
