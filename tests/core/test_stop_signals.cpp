// The one place stop handlers are installed: a scope puts back what it
// replaced, scopes nest, and a stop request records the signal instead of
// ending the process.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>

#include "attn/core/stop_signals.h"

using namespace attn;

namespace {

std::atomic<int> outer_seen{0};
extern "C" void outer_handler(int signal_number) { outer_seen.store(signal_number); }

StopHandler installed(int signal_number) {
  struct sigaction now {};
  ::sigaction(signal_number, nullptr, &now);
  return now.sa_handler;
}

}  // namespace

TEST_CASE("stop signals: scopes nest and restore; a request records the latest signal", "[core][signal]") {
  REQUIRE(stop_signals().size() == 3);
  const StopHandler before = installed(SIGINT);
  {
    StopSignalScope outer(outer_handler);
    for (const int s : stop_signals()) REQUIRE(installed(s) == outer_handler);
    {
      StopRequest request;
      REQUIRE_FALSE(request.requested());
      REQUIRE(pending_stop_signal() == 0);
      ::raise(SIGHUP);
      REQUIRE(request.signal() == SIGHUP);
      ::raise(SIGTERM);
      REQUIRE(request.signal() == SIGTERM);
      REQUIRE(pending_stop_signal() == SIGTERM);
      REQUIRE(outer_seen.load() == 0);  // the inner scope had it
    }
    for (const int s : stop_signals()) REQUIRE(installed(s) == outer_handler);
    ::raise(SIGINT);
    REQUIRE(outer_seen.load() == SIGINT);
    StopRequest again;  // a new request forgets the earlier one's signal
    REQUIRE_FALSE(again.requested());
  }
  REQUIRE(installed(SIGINT) == before);
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  REQUIRE((now.sa_flags & SA_RESTART) == 0);  // put back as it was, flags included (the default has none)
}
