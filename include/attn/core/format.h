// Numbers as the command line, the score lines and the report pages print them.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// printf's "%.*f": 37.6049 with 2 decimals -> "37.60".
std::string format_fixed(double value, int decimals);

// The shortest text that reads back as the same double: 0.05 -> "0.05", 2.0 -> "2".
std::string format_number(double value);

// "h:mm:ss"; "?" for a negative, NaN or absurdly large duration.
std::string format_duration(double seconds);

// 1234567 -> "1,234,567".
std::string format_count(std::int64_t n);

}  // namespace attn
