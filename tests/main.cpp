// The Catch2 (v2) runner. Compiled once; every other test file is small.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <csignal>

int main(int argc, char* argv[]) {
  // A server that closes a connection while a test writes to it must fail
  // that test (the write reports EPIPE), not end the whole suite by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  return Catch::Session().run(argc, argv);
}
