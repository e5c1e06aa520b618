#include "attn/serve/http_rules.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <arpa/inet.h>

#include "attn/serve/api.h"

namespace attn::serve {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The host part of a Host header: "[::1]:8080" → "::1", "a.b:80" → "a.b".
std::string host_part(std::string_view header) {
  if (!header.empty() && header.front() == '[') {
    const std::size_t close = header.find(']');
    return close == std::string_view::npos ? std::string() : lower(header.substr(1, close - 1));
  }
  const std::size_t colon = header.find(':');
  if (colon != std::string_view::npos && header.find(':', colon + 1) != std::string_view::npos)
    return lower(header);  // an unbracketed IPv6 address: not a valid Host, compared whole
  return lower(header.substr(0, colon));
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool is_loopback(const std::string& host) { return host == "::1" || host.rfind("127.", 0) == 0 || host == "localhost"; }

}  // namespace

HttpReply error_reply(int status, const std::string& message) {
  return {status, "application/json", error_response(status, message).body, {}};
}

HostRule::HostRule(std::string listening, std::vector<std::string> allowed)
    : listening_(lower(listening)), allowed_(std::move(allowed)) {
  for (std::string& a : allowed_) a = host_part(a);
  wildcard_ = listening_ == "0.0.0.0" || listening_ == "::" || listening_.empty();
}

bool HostRule::accepts(std::string_view header) const {
  const std::string host = host_part(header);
  if (host.empty()) return false;
  if (host == listening_ || std::find(allowed_.begin(), allowed_.end(), host) != allowed_.end()) return true;
  if (is_loopback(listening_) && is_loopback(host)) return true;
  // Listening on every address: any address of the machine is its own, but
  // never a name (a name is what DNS rebinding points at this machine).
  return wildcard_ && is_ip_literal(host);
}

std::optional<Route> route_of(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  static const std::array<std::pair<std::string_view, Route>, 5> routes{{{"/", Route::page},
                                                                         {"/healthz", Route::health},
                                                                         {"/v1/models", Route::models},
                                                                         {"/v1/translate", Route::translate},
                                                                         {"/v1/attend", Route::attend}}};
  for (const auto& [p, r] : routes)
    if (p == path) return r;
  return std::nullopt;
}

std::string allowed_methods(Route route) {
  return route == Route::translate || route == Route::attend ? "POST" : "GET, HEAD";
}

bool method_allowed(Route route, std::string_view method) {
  if (route == Route::translate || route == Route::attend) return method == "POST";
  return method == "GET" || method == "HEAD";
}

bool is_json_type(std::string_view content_type) {
  const std::string type = lower(content_type.substr(0, content_type.find(';')));
  const std::size_t first = type.find_first_not_of(" \t"), last = type.find_last_not_of(" \t");
  return first != std::string::npos && type.substr(first, last - first + 1) == "application/json";
}

std::vector<std::pair<std::string, std::string>> security_headers(bool page) {
  std::vector<std::pair<std::string, std::string>> h{
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-store"},
  };
  h.emplace_back("Content-Security-Policy",
                 page ? "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
                        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
                      : "default-src 'none'; frame-ancestors 'none'");
  return h;
}

}  // namespace attn::serve
