#include "attn/serve/http_codings.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace attn::serve {

namespace {

// The elements of a comma-separated list over every field, trimmed and in
// lower case, empty ones dropped (RFC 9110 5.6.1).
std::vector<std::string> elements(const std::vector<std::string_view>& fields) {
  std::vector<std::string> out;
  for (std::string_view field : fields) {
    for (std::size_t at = 0; at <= field.size();) {
      const std::size_t comma = std::min(field.find(',', at), field.size());
      std::string_view e = field.substr(at, comma - at);
      while (!e.empty() && (e.front() == ' ' || e.front() == '\t')) e.remove_prefix(1);
      while (!e.empty() && (e.back() == ' ' || e.back() == '\t')) e.remove_suffix(1);
      if (!e.empty()) {
        std::string s(e);
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        out.push_back(std::move(s));
      }
      at = comma + 1;
    }
  }
  return out;
}

// An element as a message shows it: at most 40 bytes, printable ASCII.
std::string shown(const std::string& e) {
  std::string out;
  for (char c : e.substr(0, 40)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out + (e.size() > 40 ? "…" : "");
}

}  // namespace

std::optional<HttpReply> transfer_coding_refusal(const std::vector<std::string_view>& fields, bool http_1_0) {
  if (fields.empty()) return std::nullopt;
  // RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
  if (http_1_0)
    return error_reply(400, "the request could not be read: HTTP/1.0 has no Transfer-Encoding; send the body "
                            "with Content-Length");
  const std::vector<std::string> codings = elements(fields);
  if (codings.empty())
    return error_reply(400, "the request could not be read: its Transfer-Encoding is empty; send the body with "
                            "Content-Length or Transfer-Encoding: chunked");
  for (const std::string& c : codings)
    if (c != "chunked")
      return error_reply(501, "the transfer coding \"" + shown(c) +
                                  "\" is not implemented; send the body as it is, with Content-Length or "
                                  "Transfer-Encoding: chunked alone");
  if (codings.size() > 1)
    return error_reply(400, "the request could not be read: Transfer-Encoding applies chunked " +
                                std::to_string(codings.size()) + " times; send it once");
  return std::nullopt;
}

std::optional<HttpReply> content_coding_refusal(const std::vector<std::string_view>& fields) {
  for (const std::string& c : elements(fields))
    if (c != "identity") {
      HttpReply r = error_reply(415, "the content coding \"" + shown(c) +
                                         "\" is not supported; send the JSON body uncompressed, without "
                                         "Content-Encoding");
      r.headers.emplace_back("Accept-Encoding", "identity");
      return r;
    }
  return std::nullopt;
}

std::optional<HttpReply> expectation_refusal(const std::vector<std::string_view>& fields) {
  for (const std::string& e : elements(fields))
    if (e != "100-continue")
      return error_reply(417, "the expectation \"" + shown(e) +
                                  "\" cannot be met; the only one this server knows is Expect: 100-continue");
  return std::nullopt;
}

bool expects_continue(const std::vector<std::string_view>& fields) {
  const std::vector<std::string> e = elements(fields);
  return std::find(e.begin(), e.end(), "100-continue") != e.end();
}

}  // namespace attn::serve
