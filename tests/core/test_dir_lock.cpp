// The save dir's lock (core/dir_lock.h): one holder at a time, no file left
// after the holder is done, and a file left by a killed holder taken over.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>

#include "../support.h"
#include "attn/core/dir_lock.h"
#include "attn/core/error.h"

namespace fs = std::filesystem;
using attn::DirLock;

TEST_CASE("dir lock: held once, named by its holder, and removed when released", "[core][lock]") {
  attn::test::ScratchDir dir;
  {
    const DirLock first(dir.path());
    REQUIRE(fs::exists(dir.path() / "attn.lock"));
    REQUIRE(DirLock::holder(dir.path()) == std::optional<pid_t>(::getpid()));
    REQUIRE_THROWS_WITH(DirLock(dir.path()), Catch::Contains("is in use by process"));
    REQUIRE_THROWS_AS(DirLock::require_unheld(dir.path()), attn::Error);
  }
  REQUIRE_FALSE(fs::exists(dir.path() / "attn.lock"));
  REQUIRE_FALSE(DirLock::holder(dir.path()).has_value());
  REQUIRE_NOTHROW(DirLock::require_unheld(dir.path()));
}

TEST_CASE("dir lock: a lock file a killed holder left is taken over, and removed after", "[core][lock]") {
  attn::test::ScratchDir dir;
  std::ofstream(dir.path() / "attn.lock") << "999999\n";  // no process holds its flock
  REQUIRE_FALSE(DirLock::holder(dir.path()).has_value());
  {
    const DirLock lock(dir.path());
    REQUIRE(DirLock::holder(dir.path()) == std::optional<pid_t>(::getpid()));
  }
  REQUIRE_FALSE(fs::exists(dir.path() / "attn.lock"));
}
