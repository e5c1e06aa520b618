// Every script folder's README.md table names what the folder holds: each
// script named exists, and each script there (.sh, .py) is named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

// The first cell of each table row that starts with a `name`.
std::set<std::string> table_names(const fs::path& readme) {
  std::set<std::string> names;
  std::ifstream in(readme);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::size_t end = line.find('`', 3);
    if (end != std::string::npos) names.insert(line.substr(3, end - 3));
  }
  return names;
}

}  // namespace

TEST_CASE("tools: the READMEs of tools/, bench/, experiments/ and dev/ list exactly their scripts", "[tools]") {
  for (const char* folder : {"tools", "bench", "experiments", "dev"}) {
    const fs::path dir = kRepo / folder;
    INFO(dir.string() << "/README.md");
    REQUIRE(fs::exists(dir / "README.md"));
    const std::set<std::string> listed = table_names(dir / "README.md");
    CHECK(!listed.empty());
    for (const std::string& name : listed) {
      INFO("listed: " << name);
      CHECK(fs::exists(dir / name));
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".sh" && ext != ".py")) continue;
      INFO("not listed: " << entry.path().filename().string());
      CHECK(listed.count(entry.path().filename().string()) == 1);
    }
  }
}
