#include "attn/serve/http_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "attn/serve/api.h"

namespace attn::serve {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The host of a Host header, parsed as RFC 9110 has it (uri-host [":" port]):
// "[::1]:8080" → "::1", "a.b:80" → "a.b"; nullopt for anything else
// ("[::1].evil", "a:b:c", "a:8x", an empty name), which is then refused whole.
// A prefix is never enough: the rule compares the exact host.
std::optional<std::string> host_part(std::string_view header) {
  const auto port_ok = [](std::string_view rest) {
    if (rest.empty()) return true;
    if (rest.front() != ':') return false;
    rest.remove_prefix(1);
    return std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  };
  if (!header.empty() && header.front() == '[') {
    const std::size_t close = header.find(']');
    if (close == std::string_view::npos || close == 1 || !port_ok(header.substr(close + 1))) return std::nullopt;
    std::string host = lower(header.substr(1, close - 1));
    unsigned char buf[16];
    if (::inet_pton(AF_INET6, host.c_str(), buf) != 1) return std::nullopt;
    return host;
  }
  const std::size_t colon = header.find(':');
  const std::string_view name = header.substr(0, colon);
  if (name.empty() || (colon != std::string_view::npos && !port_ok(header.substr(colon)))) return std::nullopt;
  // reg-name characters only (unreserved and sub-delims; no '%', '@', '/', space or control bytes).
  const bool name_ok = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 ||
           std::string_view("-._~!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (!name_ok) return std::nullopt;
  return lower(name);
}

bool is_ipv4(const std::string& host, in_addr* out = nullptr) {
  in_addr addr{};
  const bool ok = ::inet_pton(AF_INET, host.c_str(), &addr) == 1;
  if (ok && out != nullptr) *out = addr;
  return ok;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return is_ipv4(host) || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Loopback by value, never by prefix: an IPv4 address in 127.0.0.0/8, the
// IPv6 address ::1 in any spelling, or the name "localhost" exactly.
bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (is_ipv4(host, &v4)) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace

HttpReply error_reply(int status, const std::string& message) {
  return {status, "application/json", error_response(status, message).body, {}};
}

HostRule::HostRule(std::string listening, std::vector<std::string> allowed)
    : listening_(lower(listening)), allowed_(std::move(allowed)) {
  for (std::string& a : allowed_) a = host_part(a).value_or(lower(a));
  wildcard_ = listening_ == "0.0.0.0" || listening_ == "::" || listening_.empty();
}

bool HostRule::accepts(std::string_view header) const {
  const std::optional<std::string> parsed = host_part(header);
  if (!parsed) return false;
  const std::string& host = *parsed;
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
