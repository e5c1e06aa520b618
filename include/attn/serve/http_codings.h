// What the HTTP side of `attn serve` does not implement, refused as RFC 9110
// and 9112 ask, before the body is read: a transfer coding other than chunked
// alone (501; the body's length is then unknown, so the connection closes),
// Transfer-Encoding on HTTP/1.0 (400), a content coding on a request body (415
// with Accept-Encoding: identity: the body is read as it is, never
// uncompressed), and an expectation other than 100-continue (417). Each
// function takes every field of its name as sent (a list may be split over
// several fields; names and codings are case-insensitive, empty list elements
// are ignored) and returns the refusal, or nullopt.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "attn/serve/http_rules.h"

namespace attn::serve {

std::optional<HttpReply> transfer_coding_refusal(const std::vector<std::string_view>& fields, bool http_1_0);
std::optional<HttpReply> content_coding_refusal(const std::vector<std::string_view>& fields);
std::optional<HttpReply> expectation_refusal(const std::vector<std::string_view>& fields);
// Whether the client waits for "100 Continue" before it sends the body.
bool expects_continue(const std::vector<std::string_view>& fields);

}  // namespace attn::serve
