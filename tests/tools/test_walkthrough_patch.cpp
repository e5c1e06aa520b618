// docs/fifth-mechanism.patch, the walk-through of adding a mechanism, still
// applies to the tree: a new mechanism moves the registry, presets and schema
// lines it touches, and a walk-through that no longer applies teaches nothing.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "../support.h"

namespace fs = std::filesystem;

TEST_CASE("docs: the fifth-mechanism walk-through patch applies to the tree (git apply --check)",
          "[tools][docs][e2e]") {
  const fs::path repo = fs::path(__FILE__).parent_path().parent_path().parent_path();
  if (!fs::exists(repo / ".git")) ATTN_SKIP("not a git checkout: git apply needs one");
  if (std::system("git --version >/dev/null 2>&1") != 0) ATTN_SKIP("git is not installed");
  const std::string cmd = "git -C '" + repo.string() + "' apply --check docs/fifth-mechanism.patch 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("regenerate it: apply it with its conflicts resolved by hand on a branch, rebuild, refresh the schema, "
       "commit, then git format-patch -1 --stdout > docs/fifth-mechanism.patch");
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}
