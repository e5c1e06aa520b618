// The repository stands alone: no file names a design note that is not part
// of it, and every "docs/<file>.md §N.M" a comment or page gives names a file
// of docs/ that exists and, for a section, a numbered heading of that file
// ("## 1. MUSE" is §1, "### 1.1 …" is §1.1). A bare "§N.M" in a source file
// belongs to the docs file the same file named last before it; in a page of
// docs/ it is the page's own section unless it follows a page's name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();
const fs::path kThisFile = fs::path("tests") / "tools" / fs::path(__FILE__).filename();  // from the root

// Spelled in pieces, so that this file is no instance of what it looks for.
const std::vector<std::string> kForeignDocs = {std::string("MECHANISMS") + ".md", std::string("DESIGN") + ".md",
                                               std::string("BENCHMARKS") + ".md"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The numbered sections of a Markdown page, read once per page.
const std::set<std::string>& sections_of(const fs::path& page) {
  static std::map<fs::path, std::set<std::string>> cache;
  auto [it, fresh] = cache.try_emplace(page);
  if (fresh) {
    static const std::regex heading(R"(^#{1,6}[ \t]+(\d+(?:\.\d+)*)\.?[ \t])");
    std::istringstream lines(read_file(page));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, heading)) it->second.insert(m[1]);
    }
  }
  return it->second;
}

struct Mention {
  std::size_t begin = 0, end = 0;
  fs::path page;  // relative to the repository
};

// Where `text` names a Markdown page: "docs/<path>.md" anywhere, and in a page
// of docs/ also a name relative to that page ("claims.md", "results/kernels.md").
std::vector<Mention> mentions(const std::string& text, const fs::path& file) {
  std::vector<Mention> out;
  static const std::regex rooted(R"(docs/([A-Za-z0-9_./-]+?\.md))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), rooted); it != std::sregex_iterator(); ++it)
    out.push_back({static_cast<std::size_t>(it->position(0)), static_cast<std::size_t>(it->position(0) + it->length(0)),
                   fs::path("docs") / (*it)[1].str()});
  if (file.begin() != file.end() && *file.begin() == "docs" && file.extension() == ".md") {
    static const std::regex relative(R"((^|[^A-Za-z0-9_./-])([A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.md))");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), relative); it != std::sregex_iterator(); ++it) {
      const std::size_t begin = static_cast<std::size_t>(it->position(2));
      bool rooted_already = false;
      for (const Mention& m : out) rooted_already = rooted_already || (begin >= m.begin && begin < m.end);
      if (!rooted_already)
        out.push_back({begin, begin + static_cast<std::size_t>(it->length(2)),
                       (file.parent_path() / (*it)[2].str()).lexically_normal()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Mention& a, const Mention& b) { return a.begin < b.begin; });
  return out;
}

// True when text[from, to) holds only what separates a page's name from its
// sections in a list ("docs/x.md §1, §2.3", "[x.md](x.md) §4.1/§4.2", "§1.1–1.4").
bool only_separators(const std::string& text, std::size_t from, std::size_t to) {
  static const std::string kSeparators = " \t\n,/-)]([`.0123456789";
  for (std::size_t i = from; i < to;) {
    if (text.compare(i, 2, "§") == 0) {
      i += 2;
    } else if (text.compare(i, 3, "–") == 0) {
      i += 3;
    } else if (kSeparators.find(text[i]) != std::string::npos) {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// What is wrong with the references of one file (path relative to the repository).
std::vector<std::string> problems_in(const fs::path& file, const std::string& text) {
  std::vector<std::string> problems;
  for (const std::string& name : kForeignDocs)
    if (text.find(name) != std::string::npos)
      problems.push_back(file.string() + " names " + name + ", which is not part of the repository");
  const std::vector<Mention> named = mentions(text, file);
  for (const Mention& m : named)
    if (m.page.string().rfind("docs/", 0) == 0 && text.compare(m.begin, 5, "docs/") == 0 &&
        !fs::is_regular_file(kRepo / m.page))
      problems.push_back(file.string() + " names " + m.page.string() + ", which does not exist");
  const bool is_page = file.begin() != file.end() && *file.begin() == "docs" && file.extension() == ".md";
  static const std::regex section(R"(^§[ \t]*(\d+(?:\.\d+)*)(?:[ \t]*(?:–|-)[ \t]*(\d+(?:\.\d+)*))?)");
  for (std::size_t at = text.find("§"); at != std::string::npos; at = text.find("§", at + 2)) {
    std::smatch m;
    const std::string rest = text.substr(at, 40);
    if (!std::regex_search(rest, m, section)) continue;  // "§ name": not a section number
    // The page it belongs to: the last one named before it, if only a list lies between.
    const Mention* last = nullptr;
    for (const Mention& n : named)
      if (n.end <= at) last = &n;
    fs::path page;
    if (last && only_separators(text, last->end, at)) {
      page = last->page;
    } else if (is_page) {
      page = file;
    } else if (last && last->page.string().rfind("docs/", 0) == 0) {
      page = last->page;
    } else {
      problems.push_back(file.string() + ": " + m[0].str() + " names no page before it (write docs/<page>.md §N)");
      continue;
    }
    if (!fs::is_regular_file(kRepo / page)) {
      problems.push_back(file.string() + ": " + m[0].str() + " of " + page.string() + ", which does not exist");
      continue;
    }
    for (std::size_t g = 1; g <= 2; ++g)
      if (m[g].matched && !sections_of(kRepo / page).count(m[g].str()))
        problems.push_back(file.string() + ": " + page.string() + " has no section " + m[g].str());
  }
  return problems;
}

// Every text file the check reads: the folders users get, less run folders and this test.
std::vector<fs::path> files_to_check() {
  std::vector<fs::path> files{"README.md"};
  for (const char* root : {"src", "include", "tests", "bench", "tools", "docs", "dev", "experiments"}) {
    if (!fs::is_directory(kRepo / root)) continue;
    for (auto it = fs::recursive_directory_iterator(kRepo / root); it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_directory() && it->path().filename() == "runs") {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      const fs::path file = kRepo.empty() ? it->path() : it->path().lexically_relative(kRepo);
      if (file.lexically_normal() != kThisFile) files.push_back(file.lexically_normal());
    }
  }
  return files;
}

}  // namespace

TEST_CASE("docs references: no file cites a note the repository lacks; every docs/<page>.md §N exists",
          "[tools][docs]") {
  const std::vector<fs::path> files = files_to_check();
  REQUIRE(files.size() > 100);
  std::size_t sections_seen = 0;
  std::vector<std::string> problems;
  for (const fs::path& file : files) {
    const std::string text = read_file(kRepo / file);
    if (text.find('\0') != std::string::npos) continue;  // images and other binary files
    for (std::size_t at = text.find("§"); at != std::string::npos; at = text.find("§", at + 2)) ++sections_seen;
    for (std::string& p : problems_in(file, text)) problems.push_back(std::move(p));
  }
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  // The code cites docs/mechanisms-spec.md by section: the check above read them.
  CHECK(sections_seen > 50);
}

TEST_CASE("docs references: the check finds a foreign note, a missing page, a missing section, a bare §",
          "[tools][docs]") {
  const auto problems = [](const char* file, const std::string& text) {
    return problems_in(fs::path(file), text).size();
  };
  // What the repository's files do.
  CHECK(problems("src/a.cpp", "// (docs/mechanisms-spec.md §1.1–1.4, §4.3) later §2.3 and §5") == 0);
  CHECK(problems("src/a.cpp", "// docs/mechanisms-spec.md §4.1/§4.2 per row; see docs/guide.md") == 0);
  CHECK(problems("docs/attention-json.md", "strict masks, [mechanisms-spec.md](mechanisms-spec.md) §0.4") == 0);
  CHECK(problems("docs/mechanisms-spec.md", "see [claims.md](claims.md); below, §1 and §4.5") == 0);
  CHECK(problems("src/a.cpp", "(§ kFactorisedMinDenominator)") == 0);
  // What it must not.
  CHECK(problems("src/a.cpp", "// (" + kForeignDocs[0] + " §1)") >= 1);
  CHECK(problems("bench/b.sh", "# told (../shared/" + kForeignDocs[2] + ")") == 1);
  CHECK(problems("src/a.cpp", "// docs/no-such-page.md") == 1);
  CHECK(problems("src/a.cpp", "// docs/mechanisms-spec.md §9.9") == 1);
  CHECK(problems("src/a.cpp", "// docs/mechanisms-spec.md §1.1–1.99") == 1);
  CHECK(problems("src/a.cpp", "// docs/mechanisms-spec.md §1, then §7.7") == 1);
  CHECK(problems("src/a.cpp", "// the claim (§3.5)") == 1);
  CHECK(problems("docs/x.md", "[claims.md](claims.md) §2") == 1);
}
