// The Catch2 (v2) runner. Compiled once; every other test file is small.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
