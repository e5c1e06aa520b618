#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "../support.h"
#include "attn/core/atomic_file.h"
#include "attn/core/error.h"
#include "attn/core/safetensors.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

using TempDir = test::ScratchDir;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> entries(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(directory)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `write` in a child process whose file size limit is `max_bytes` (the
// write then fails with EFBIG, as on a full disk) and returns what it reported:
// "ok", the Error message, or "other exception".
std::string write_with_size_limit(rlim_t max_bytes, const std::function<void()>& write) {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_ends[0]);
    std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills us instead of failing the write
    const rlimit limit{max_bytes, max_bytes};
    std::string report = "setrlimit failed";
    if (::setrlimit(RLIMIT_FSIZE, &limit) == 0) {
      try {
        write();
        report = "ok";
      } catch (const Error& e) {
        report = e.what();
      } catch (...) {
        report = "other exception";
      }
    }
    const ssize_t ignored = ::write(pipe_ends[1], report.data(), report.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_ends[1]);
  std::string report;
  char buffer[512];
  ssize_t got;
  while ((got = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0) report.append(buffer, static_cast<std::size_t>(got));
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  return report;
}

}  // namespace

TEST_CASE("atomic file: commit publishes the content, with umask permissions and no temp left", "[io]") {
  TempDir dir;
  const fs::path path = dir.path() / "out.txt";
  {
    AtomicFile out(path);
    REQUIRE(out.temp_path().parent_path() == dir.path());
    REQUIRE(fs::exists(out.temp_path()));
    REQUIRE_FALSE(fs::exists(path));
    std::fprintf(out.stream(), "line %d\n", 1);
    out.write(std::string_view("line 2\n"));
    out.commit();
    REQUIRE_THROWS_AS(out.commit(), std::logic_error);
  }
  REQUIRE(read_text(path) == "line 1\nline 2\n");
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"out.txt"});
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat status {};
  REQUIRE(::stat(path.c_str(), &status) == 0);
  REQUIRE((status.st_mode & 0777) == (0666 & ~mask));

  // A relative path with no directory part writes into the working directory.
  const fs::path saved = fs::current_path();
  fs::current_path(dir.path());
  {
    AtomicFile out("relative.txt");
    out.write(std::string_view("r"));
    out.commit();
  }
  fs::current_path(saved);
  REQUIRE(read_text(dir.path() / "relative.txt") == "r");
}

TEST_CASE("atomic file: not committed means nothing written, the old file untouched", "[io]") {
  TempDir dir;
  const fs::path path = dir.path() / "keep.txt";
  { std::ofstream(path) << "old"; }
  {
    AtomicFile out(path);
    out.write(std::string_view("new content that must never appear"));
    // e.g. an exception unwinds here
  }
  REQUIRE(read_text(path) == "old");
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"keep.txt"});
}

TEST_CASE("atomic file: a directory that does not exist is an Error naming the path", "[io]") {
  TempDir dir;
  const fs::path path = dir.path() / "no" / "such" / "dir" / "model.attn";
  REQUIRE_THROWS_WITH(AtomicFile(path), Catch::Contains(path.string()) && Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(write_safetensors(path, {}, {}), Catch::Contains("does not exist"));
  REQUIRE(entries(dir.path()).empty());
}

TEST_CASE("atomic file: a failed rename leaves no temp behind", "[io]") {
  TempDir dir;
  const fs::path target = dir.path() / "taken";
  fs::create_directories(target / "inside");  // a non-empty directory cannot be renamed over
  AtomicFile out(target);
  out.write(std::string_view("x"));
  REQUIRE_THROWS_WITH(out.commit(), Catch::Contains(target.string()) && Catch::Contains("renaming"));
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"taken"});
  REQUIRE(fs::is_directory(target / "inside"));
}

TEST_CASE("atomic file: a write that fails (file size limit, like a full disk) keeps the old file", "[io]") {
  TempDir dir;
  const fs::path path = dir.path() / "model.attn";
  const std::vector<float> old_values{1.0f, 2.0f, 3.0f};
  const TensorRef old_tensor{"w", Shape{3}, old_values};
  write_safetensors(path, std::span(&old_tensor, 1), {{"generation", "old"}});
  const std::string old_bytes = read_text(path);

  // 4 MB of weights against a 64 KB limit: fwrite fails part way.
  const std::vector<float> big(1 << 20, 0.5f);
  const TensorRef big_tensor{"w", Shape{1 << 20}, big};
  const std::string report = write_with_size_limit(64 * 1024, [&] {
    write_safetensors(path, std::span(&big_tensor, 1), {{"generation", "new"}});
  });
  INFO(report);
  REQUIRE(contains(report, "cannot write " + path.string()));
  REQUIRE(contains(report, "File too large"));
  REQUIRE(read_text(path) == old_bytes);
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"model.attn"});
  REQUIRE(SafetensorsFile::read(path).metadata().at("generation") == "old");

  // The same through the stream interface (fprintf), failing in the final flush.
  const fs::path text = dir.path() / "log.txt";
  const std::string stream_report = write_with_size_limit(1000, [&] {
    AtomicFile out(text);
    for (int i = 0; i < 300; ++i) std::fprintf(out.stream(), "line %d\n", i);
    out.commit();
  });
  REQUIRE(contains(stream_report, "cannot write " + text.string()));
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"model.attn"});

  // And a write that fits is unaffected by the limit.
  REQUIRE(write_with_size_limit(1 << 20, [&] {
            write_safetensors(path, std::span(&old_tensor, 1), {{"generation", "third"}});
          }) == "ok");
  REQUIRE(SafetensorsFile::read(path).metadata().at("generation") == "third");
}

TEST_CASE("atomic file: a device is written in place: /dev/full fails with ENOSPC, /dev/null stays a device", "[io]") {
  {
    AtomicFile out("/dev/null");
    REQUIRE(out.temp_path().empty());
    out.write(std::string_view("discarded\n"));
    out.commit();
  }
  struct stat null_device {};
  REQUIRE(::stat("/dev/null", &null_device) == 0);
  REQUIRE(S_ISCHR(null_device.st_mode));

  if (!fs::exists("/dev/full")) return;
  std::string message;
  try {
    AtomicFile out("/dev/full");
    out.write(std::string_view("no room\n"));
    out.commit();
  } catch (const Error& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(contains(message, "cannot write /dev/full: No space left on device"));
  struct stat full_device {};
  REQUIRE(::stat("/dev/full", &full_device) == 0);
  REQUIRE(S_ISCHR(full_device.st_mode));
}

TEST_CASE("atomic file: a symlink is written through: the target changes, the link stays a link", "[io]") {
  TempDir dir;
  fs::create_directory(dir.path() / "real");
  { std::ofstream(dir.path() / "real" / "target.txt") << "old\n"; }
  fs::create_symlink(fs::path("real") / "target.txt", dir.path() / "link.txt");  // relative, as ln -s makes them
  fs::create_symlink(dir.path() / "link.txt", dir.path() / "link2.txt");         // a chain
  fs::create_symlink(fs::path("real") / "new.txt", dir.path() / "dangling.txt");
  for (const char* link : {"link.txt", "link2.txt"}) {
    AtomicFile out(dir.path() / link);
    out.write(std::string_view(std::string("through ") + link + "\n"));
    out.commit();
    INFO(link);
    REQUIRE(fs::is_symlink(dir.path() / link));
    REQUIRE(read_text(dir.path() / "real" / "target.txt") == std::string("through ") + link + "\n");
  }
  {
    AtomicFile out(dir.path() / "dangling.txt");
    out.write(std::string_view("created\n"));
    out.commit();
  }
  REQUIRE(fs::is_symlink(dir.path() / "dangling.txt"));
  REQUIRE(read_text(dir.path() / "real" / "new.txt") == "created\n");
  REQUIRE(entries(dir.path() / "real") == std::vector<std::string>{"new.txt", "target.txt"});
}

TEST_CASE("atomic file: commit_together publishes all or none", "[io]") {
  TempDir dir;
  { std::ofstream(dir.path() / "a.json") << "old a\n"; }
  {
    AtomicFile a(dir.path() / "a.json"), b(dir.path() / "b.html");
    a.write(std::string_view("new a\n"));
    b.write(std::string_view("new b\n"));
    AtomicFile* both[] = {&a, &b};
    commit_together(both);
  }
  REQUIRE(read_text(dir.path() / "a.json") == "new a\n");
  REQUIRE(read_text(dir.path() / "b.html") == "new b\n");
  if (!fs::exists("/dev/full")) return;
  std::string message;
  try {
    AtomicFile a(dir.path() / "a.json"), full("/dev/full");
    a.write(std::string_view("newer a\n"));
    full.write(std::string_view("no room\n"));
    AtomicFile* both[] = {&a, &full};
    commit_together(both);
  } catch (const Error& e) {
    message = e.what();
  }
  REQUIRE(contains(message, "/dev/full"));
  REQUIRE(read_text(dir.path() / "a.json") == "new a\n");  // untouched: the other output failed
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"a.json", "b.html"});

  // The second rename fails (its target became a directory after both were written): the first is taken back.
  message.clear();
  try {
    AtomicFile a(dir.path() / "a.json"), c(dir.path() / "c.json"), late(dir.path() / "late.html");
    a.write(std::string_view("newest a\n"));
    c.write(std::string_view("new c\n"));
    late.write(std::string_view("page\n"));
    fs::create_directories(dir.path() / "late.html" / "inside");
    AtomicFile* all[] = {&a, &c, &late};
    commit_together(all);
  } catch (const Error& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(contains(message, "late.html"));
  REQUIRE(read_text(dir.path() / "a.json") == "new a\n");  // its previous content back
  REQUIRE(entries(dir.path()) == std::vector<std::string>{"a.json", "b.html", "late.html"});  // no c.json, no temporary
}

TEST_CASE("atomic file: a temporary of a killed writer is swept by the next write of that target only", "[io]") {
  TempDir dir;
  // pid 2^22+1 is above the kernel's pid_max default ceiling: no such process.
  const std::string dead = ".out.json.tmp-4194305-0", other = ".other.json.tmp-4194305-0";
  const std::string live = ".out.json.tmp-" + std::to_string(::getpid()) + "-999999";
  for (const std::string& name : {dead, other, live}) std::ofstream(dir.path() / name) << "partial";
  {
    AtomicFile out(dir.path() / "out.json");
    out.write(std::string_view("{}\n"));
    out.commit();
  }
  REQUIRE(entries(dir.path()) == std::vector<std::string>{other, live, "out.json"});
}

TEST_CASE("atomic file: SIGINT and SIGTERM remove the temporaries of live writers, then end the process", "[io]") {
  for (const int signal_number : {SIGINT, SIGTERM}) {
    TempDir dir;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      remove_temporaries_on_signals();
      AtomicFile a(dir.path() / "a.json"), b(dir.path() / "b.html");
      a.write(std::string_view("partial"));
      ::raise(signal_number);
      ::_exit(0);  // not reached
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    INFO("signal " << signal_number);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == signal_number);
    REQUIRE(entries(dir.path()).empty());
  }
}

TEST_CASE("atomic file: a replaced file keeps its permissions; any legal name, 255 bytes too, is written", "[io]") {
  TempDir dir;
  const fs::path secret = dir.path() / "secret.txt";
  { std::ofstream(secret) << "old\n"; }
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  const mode_t old_umask = ::umask(022);
  {
    AtomicFile out(secret);
    out.write(std::string_view("new\n"));
    out.commit();
  }
  ::umask(old_umask);
  REQUIRE(read_text(secret) == "new\n");
  REQUIRE((fs::status(secret).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

  for (const std::size_t length : {200, 230, 245, 254, 255}) {
    INFO(length);
    const fs::path name = dir.path() / std::string(length, 'n');
    AtomicFile out(name);
    REQUIRE(out.temp_path().filename().string().size() <= 255);
    out.write(std::string_view("text\n"));
    out.commit();
    REQUIRE(read_text(name) == "text\n");
  }
  REQUIRE(entries(dir.path()).size() == 6);  // no temporary left
}

TEST_CASE("atomic file: a failed write says the OS's reason even when stdio's flag is all that is left", "[io]") {
  if (!fs::exists("/dev/full")) return;
  std::string message;
  try {
    AtomicFile out("/dev/full");
    // Written through the stream and flushed by hand, as the map writers do: the error is sticky, errno gone.
    for (int i = 0; i < 1000; ++i) std::fprintf(out.stream(), "line %d of a long page\n", i);
    std::fflush(out.stream());
    errno = 0;
    out.commit();
  } catch (const Error& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(contains(message, "No space left on device"));
  REQUIRE_FALSE(contains(message, "Input/output error"));
}
