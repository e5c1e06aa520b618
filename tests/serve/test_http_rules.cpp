// The Host rule of attn serve (serve/http_rules.h) without a server: the exact
// host is compared, never a prefix, so a DNS name that merely starts with a
// loopback address (what a rebinding attack points at this machine) is refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/serve/http_rules.h"

using attn::serve::HostRule;

TEST_CASE("Host rule: loopback listener takes loopback addresses and localhost, with or without a port",
          "[serve][host][nothing-lost-4]") {
  const HostRule rule("127.0.0.1", {});
  for (const std::string host : {"127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]", "[::1]:8080",
                                 "[0:0:0:0:0:0:0:1]:80", "127.1.2.3"}) {
    INFO(host);
    CHECK(rule.accepts(host));
  }
}

TEST_CASE("Host rule: a name that starts with a loopback address is refused (DNS rebinding)",
          "[serve][host][nothing-lost-4]") {
  const HostRule rule("127.0.0.1", {"attn.example"});
  for (const std::string host : {"127.0.0.1.attacker.example",
                                 "127.0.0.1.attacker.example:8080",
                                 "127.0.0.1x",
                                 "127.0.0.1.nip.io",
                                 "[::1].evil",
                                 "[::1].evil:80",
                                 "[::1]x",
                                 "localhost.evil",
                                 "localhostx",
                                 "127.evil",
                                 "127.0.0.1:80x",
                                 "127.0.0.1:80:80",
                                 "127.0.0.1 ",
                                 " 127.0.0.1",
                                 "127.0.0.1@evil",
                                 "127.0.0.1/x",
                                 "[::1",
                                 "[]",
                                 "[evil]",
                                 "",
                                 ":80",
                                 "attn.example.evil",
                                 "evil.attn.example",
                                 "::1",
                                 "127.0.0.1%00evil"}) {
    INFO(host);
    CHECK_FALSE(rule.accepts(host));
  }
  CHECK(rule.accepts("attn.example"));
  CHECK(rule.accepts("ATTN.example:443"));
}

TEST_CASE("Host rule: a wildcard listener takes any address of the machine, never a name",
          "[serve][host][nothing-lost-4]") {
  const HostRule rule("0.0.0.0", {});
  CHECK(rule.accepts("10.1.2.3:8080"));
  CHECK(rule.accepts("[fe80::1]"));
  CHECK_FALSE(rule.accepts("evil.example"));
  CHECK_FALSE(rule.accepts("10.1.2.3.evil.example"));
  CHECK_FALSE(rule.accepts("[fe80::1].evil"));
}

TEST_CASE("Host rule: a named listener takes its own name exactly", "[serve][host][nothing-lost-4]") {
  const HostRule rule("192.0.2.7", {});
  CHECK(rule.accepts("192.0.2.7:80"));
  CHECK_FALSE(rule.accepts("192.0.2.7.evil"));
  CHECK_FALSE(rule.accepts("127.0.0.1"));  // not loopback-listening: loopback names are not its own
}
