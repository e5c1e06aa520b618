// tools/prepare_multi30k.sh on a fake data/task1/raw folder: upstream's names
// become the quick start's, decompressed; a missing file is one line, exit 2,
// nothing written.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "../cli/run_attn.h"
#include "../support.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

void write_gzip(const fs::path& file, const std::string& content) {
  gzFile out = gzopen(file.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, content.data(), static_cast<unsigned>(content.size())) == static_cast<int>(content.size()));
  REQUIRE(gzclose(out) == Z_OK);
}

struct ScriptRun {
  int status = -1;
  std::string out, err;
};

// shell_prefix runs first in the same shell (e.g. "ulimit -f 4; ").
ScriptRun prepare(const fs::path& raw, const fs::path& out, const std::string& shell_prefix = "") {
  const fs::path log_out = out.string() + ".stdout", log_err = out.string() + ".stderr";
  const std::string cmd = shell_prefix + "bash " + (kRepo / "tools" / "prepare_multi30k.sh").string() + " " +
                          attn::test::shell_words({raw.string(), out.string()}) + " >" + log_out.string() + " 2>" +
                          log_err.string();
  const int raw_status = std::system(cmd.c_str());
  ScriptRun r{WIFEXITED(raw_status) ? WEXITSTATUS(raw_status) : -1, attn::test::slurp(log_out),
              attn::test::slurp(log_err)};
  fs::remove(log_out);
  fs::remove(log_err);
  return r;
}

}  // namespace

TEST_CASE("prepare_multi30k.sh: upstream's raw folder becomes train/valid/test2016.{de,en}", "[tools][multi30k]") {
  const fs::path dir = fs::temp_directory_path() / "attn-test-prepare-m30k";
  fs::remove_all(dir);
  const fs::path raw = dir / "raw";
  fs::create_directories(raw);
  for (const char* split : {"train", "val", "test_2016_flickr", "test_2017_flickr"})
    for (const char* lang : {"de", "en", "fr"})
      write_gzip(raw / (std::string(split) + "." + lang + ".gz"),
                 std::string(split) + " " + lang + " 1\n" + split + " " + lang + " 2\n");

  SECTION("every expected file present") {
    const ScriptRun r = prepare(raw, dir / "m30k");
    INFO(r.err);
    REQUIRE(r.status == 0);
    REQUIRE(attn::test::slurp(dir / "m30k" / "train.de") == "train de 1\ntrain de 2\n");
    REQUIRE(attn::test::slurp(dir / "m30k" / "valid.en") == "val en 1\nval en 2\n");
    REQUIRE(attn::test::slurp(dir / "m30k" / "test2016.de") == "test_2016_flickr de 1\ntest_2016_flickr de 2\n");
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir / "m30k")) ++files;
    REQUIRE(files == 6);  // the other sets and languages are left alone
  }
  SECTION("a missing file: one line naming it, exit 2, nothing written") {
    fs::remove(raw / "val.en.gz");
    const ScriptRun r = prepare(raw, dir / "m30k");
    REQUIRE(r.status == 2);
    REQUIRE(r.err.find("val.en.gz is missing") != std::string::npos);
    REQUIRE(attn::test::count_occurrences(r.err, "\n") == 1);
    REQUIRE(!fs::exists(dir / "m30k"));
  }
  fs::remove_all(dir);
}

TEST_CASE("prepare_multi30k.sh: all six files or none, the pairs checked, each failure said as what it is",
          "[tools][multi30k][nothing-lost-4]") {
  const fs::path dir = fs::temp_directory_path() / "attn-test-prepare-m30k-none";
  fs::remove_all(dir);
  const fs::path raw = dir / "raw", out = dir / "m30k";
  fs::create_directories(raw);
  // 3,000 lines a file (about 50 KB): past the size limit below.
  const auto write_all = [&] {
    for (const char* split : {"train", "val", "test_2016_flickr"})
      for (const char* lang : {"de", "en"}) {
        std::string text;
        for (int i = 0; i < 3000; ++i) text += std::string(split) + " " + lang + " line " + std::to_string(i) + "\n";
        write_gzip(raw / (std::string(split) + "." + lang + ".gz"), text);
      }
  };
  const auto one_line_error = [](const ScriptRun& r, const std::string& needle) {
    INFO(r.err);
    REQUIRE(r.status == 2);
    REQUIRE(r.err.find(needle) != std::string::npos);
    REQUIRE(attn::test::count_occurrences(r.err, "\n") == 1);
  };
  write_all();
  SECTION("a damaged later input: nothing written") {
    const fs::path last = raw / "test_2016_flickr.en.gz";
    fs::resize_file(last, fs::file_size(last) / 2);
    one_line_error(prepare(raw, out), "test_2016_flickr.en.gz: damaged gzip data");
    REQUIRE_FALSE(fs::exists(out));
  }
  SECTION("de and en of a set with different line counts, or an empty side: refused, nothing written") {
    write_gzip(raw / "val.en.gz", "one\ntwo\n");
    one_line_error(prepare(raw, out), "val.de.gz has 3000 lines but " + (raw / "val.en.gz").string() + " has 2");
    REQUIRE_FALSE(fs::exists(out));
    write_all();
    write_gzip(raw / "train.de.gz", "");
    one_line_error(prepare(raw, out), "train.de.gz holds no lines");
    REQUIRE_FALSE(fs::exists(out));
  }
  SECTION("an output path that is a file: one line, exit 2") {
    { std::ofstream(out) << "a file"; }
    one_line_error(prepare(raw, out), out.string() + " exists and is not a folder");
    REQUIRE(attn::test::slurp(out) == "a file");
  }
  SECTION("a disk that fills up is a write error, not damaged data; none of the six is left, the old ones stay") {
    // ulimit -f 40: 20 or 40 KB a file (dash's or bash's blocks), less than each file's 50 KB.
    one_line_error(prepare(raw, out, "ulimit -f 40; "),
                   "cannot write " + (out / "train.de").string() + ": File too large");
    REQUIRE_FALSE(fs::exists(out));
    fs::create_directories(out);
    { std::ofstream(out / "train.de") << "old"; }
    const ScriptRun r = prepare(raw, out, "ulimit -f 40; ");
    REQUIRE(r.err.find("damaged") == std::string::npos);
    REQUIRE(r.status == 2);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(out)) ++files;
    REQUIRE(files == 1);
    REQUIRE(attn::test::slurp(out / "train.de") == "old");
  }
  fs::remove_all(dir);
}
