// What `attn serve` asks of a request before any work, apart from sockets so
// the rules are tested alone: the Host a browser sent (a page on another
// site that rebinds its DNS name to this machine must not read the API), the
// method a path allows (405 with Allow), the content type of a JSON body (a
// cross-site form or a text/plain fetch cannot make the server work), and
// the headers every answer carries (CSP, frame and sniffing rules).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::serve {

// An answer of the HTTP side: status, type, body and extra headers.
struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A JSON error answer (the API's error body) with `status`.
HttpReply error_reply(int status, const std::string& message);

// The Host values accepted: the listening address (and "localhost" when it is
// loopback; any address of the machine when it is 0.0.0.0 or ::) and the
// names given with --allow-host. The port is not compared: a proxy in front
// may listen on another one.
class HostRule {
 public:
  HostRule(std::string listening, std::vector<std::string> allowed);
  bool accepts(std::string_view host_header) const;

 private:
  std::string listening_;
  std::vector<std::string> allowed_;
  bool wildcard_ = false;
};

enum class Route { page, health, models, translate, attend };

// The route of a path (query string removed), if it is one of the server's.
std::optional<Route> route_of(std::string_view target);
// The methods a route takes, as an Allow header says them ("GET, HEAD", "POST").
std::string allowed_methods(Route route);
bool method_allowed(Route route, std::string_view method);

// Whether a Content-Type says JSON: application/json, parameters allowed.
bool is_json_type(std::string_view content_type);

// The headers every answer carries; the page's CSP lets it run its own inline
// script and style and call this server's API, nothing else.
std::vector<std::pair<std::string, std::string>> security_headers(bool page);

}  // namespace attn::serve
