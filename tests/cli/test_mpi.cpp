// Data-parallel training under mpirun, run when `make test` found
// MPI and built build/attn-mpi (ATTN_MPI_BIN): 2 ranks train, bit for bit,
// what one process trains with --update-freq 2 (the same batches, split
// between the ranks), for a Transformer and for MUSE; a run resumes from 2
// ranks to 1 and from 1 to 2; a rank that dies ends the job and leaves
// last.attn whole.
#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "attn/model/model_file.h"
#include "attn/train/checkpoint.h"
#include "child_process.h"
#include "run_attn.h"

using namespace attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* mpi_binary() {
  const char* bin = std::getenv("ATTN_MPI_BIN");
  return bin && *bin ? bin : nullptr;
}

// A shell command line that runs mpirun as root, in a container, with both
// ranks on this machine's cores; `exec` replaces the shell with mpirun.
std::string mpirun(int ranks, bool exec = false) {
  return std::string("export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                     "OMPI_MCA_btl_vader_single_copy_mechanism=none; ") +
         (exec ? "exec " : "") + "mpirun --oversubscribe --bind-to none -np " + std::to_string(ranks) + " " +
         mpi_binary() + " ";
}

// Runs `attn train` with these flags on 1 process (the default build) or
// under mpirun with `ranks` ranks (the MPI build); returns the exit status.
int run_train(int ranks, const std::vector<std::string>& args, const fs::path& output) {
  std::vector<std::string> rest(args.begin() + 1, args.end());  // args[0] is "train"
  const std::string command = (ranks == 1 ? std::string(std::getenv("ATTN_BIN")) + " " : mpirun(ranks)) + "train " +
                              test::shell_words(rest) + " >>" + output.string() + " 2>&1";
  const int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::vector<float> weights(const fs::path& file) {
  const auto loaded = model::load_model_values(file);
  const auto v = loaded.model->params().values();
  return {v.begin(), v.end()};
}

// Largest |a − b| / max(1, |b|).
double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])) / std::max(1.0, std::abs(double(b[i]))));
  return worst;
}

// update → training loss, from a run's log.jsonl (--log-every 1).
std::map<std::int64_t, double> train_losses(const fs::path& log) {
  std::map<std::int64_t, double> loss;
  std::istringstream lines(test::slurp(log));
  std::string line;
  while (std::getline(lines, line)) {
    const json j = json::parse(line);
    if (j["split"] == "train") loss[j["update"].get<std::int64_t>()] = j["loss"].get<double>();
  }
  return loss;
}

void require_same_run(const fs::path& a, const fs::path& b) {
  const auto la = train_losses(a / "log.jsonl"), lb = train_losses(b / "log.jsonl");
  REQUIRE(la.size() == lb.size());
  for (const auto& [update, loss] : la) {
    INFO("update " << update);
    REQUIRE(lb.count(update) == 1);
    REQUIRE(loss == lb.at(update));
  }
  // Bit for bit: each rank computes one batch from zero and the 2-rank sum is g0 + g1, as one process adds them.
  REQUIRE(max_difference(weights(a / "last.attn"), weights(b / "last.attn")) == 0.0);
}

}  // namespace

TEST_CASE("mpi: 2 ranks train what 1 process trains with --update-freq 2; resume from 2 ranks to 1 and 1 to 2",
          "[mpi][train][slow]") {
  if (!mpi_binary()) {
    ATTN_SKIP(
        "no MPI build: make test builds build/attn-mpi when mpicxx is installed (apt-get install libopenmpi-dev openmpi-bin), not under SANITIZE=1");
  }
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 1);
  test::write_tiny_corpus(dir.path(), "valid", 20, 2);
  for (const std::string arch : {"transformer", "muse"}) {
    INFO("--arch " << arch);
    const fs::path out = dir.path() / (arch + ".out");
    auto args = [&](const std::string& run, int updates) {
      return test::tiny_train_args(dir.path(), arch + "-" + run,
                                   {"--arch", arch, "--update-freq", "2", "--max-updates", std::to_string(updates),
                                    "--valid-every", "4", "--log-every", "1"});
    };
    REQUIRE(run_train(1, args("one", 8), out) == 0);
    REQUIRE(run_train(2, args("two", 8), out) == 0);
    INFO(test::slurp(out));
    require_same_run(dir.path() / (arch + "-one"), dir.path() / (arch + "-two"));

    REQUIRE(run_train(2, args("two-then-one", 4), out) == 0);
    REQUIRE(run_train(1, args("two-then-one", 8), out) == 0);
    require_same_run(dir.path() / (arch + "-one"), dir.path() / (arch + "-two-then-one"));

    REQUIRE(run_train(1, args("one-then-two", 4), out) == 0);
    REQUIRE(run_train(2, args("one-then-two", 8), out) == 0);
    require_same_run(dir.path() / (arch + "-one"), dir.path() / (arch + "-one-then-two"));
  }
}

// The MPI build as one process (no mpirun) once summed the earlier batches of
// an update twice when --update-freq > 1.
TEST_CASE("mpi: world sizes 1 (no mpirun), 2 and 3 train what the default build trains, --update-freq 1 to 4",
          "[mpi][train][slow][e2e]") {
  if (!mpi_binary()) {
    ATTN_SKIP(
        "no MPI build: make test builds build/attn-mpi when mpicxx is installed (apt-get install libopenmpi-dev openmpi-bin), not under SANITIZE=1");
  }
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 200, 5);  // 1 to 5 words a line: batches of unequal sizes
  test::write_tiny_corpus(dir.path(), "valid", 10, 6);
  const fs::path out = dir.path() / "runs.out";
  for (int freq = 1; freq <= 4; ++freq) {
    auto args = [&](const std::string& run) {
      return test::tiny_train_args(dir.path(), run + std::to_string(freq),
                                   {"--update-freq", std::to_string(freq), "--max-updates", "3", "--log-every", "1"});
    };
    REQUIRE(run_train(1, args("default"), out) == 0);
    std::vector<std::string> alone = args("mpi-alone");
    const std::string command = std::string(mpi_binary()) + " " + test::shell_words(alone) + " >>" + out.string() +
                                " 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    REQUIRE(run_train(2, args("ranks2-"), out) == 0);
    REQUIRE(run_train(3, args("ranks3-"), out) == 0);
    INFO("--update-freq " << freq << "\n" << test::slurp(out));
    const fs::path reference = dir.path() / ("default" + std::to_string(freq));
    require_same_run(reference, dir.path() / ("mpi-alone" + std::to_string(freq)));
    // A sum over ranks adds the same batch gradients, associated as the ranks hold them: bit for bit when
    // that is the one process's order (each rank one batch or none: freq ≤ ranks and ≤ 2), else to rounding.
    for (const int ranks : {2, 3}) {
      INFO(ranks << " ranks");
      const fs::path run = dir.path() / ("ranks" + std::to_string(ranks) + "-" + std::to_string(freq));
      if (freq <= 2) {
        require_same_run(reference, run);
      } else {
        const auto a = train_losses(reference / "log.jsonl"), b = train_losses(run / "log.jsonl");
        REQUIRE(a.size() == b.size());
        for (const auto& [update, loss] : a) REQUIRE(std::abs(loss - b.at(update)) <= 1e-5 * std::abs(loss));
        // Adam divides by √v: a rounding-level change in a near-zero gradient moves that weight by up to a
        // fraction of one step (lr 3e-3); the loss above says the training is the same.
        REQUIRE(max_difference(weights(run / "last.attn"), weights(reference / "last.attn")) < 1e-3);
      }
    }
  }
}

TEST_CASE("mpi: a rank that dies ends the job with a message naming it; last.attn stays whole",
          "[mpi][train][slow][e2e]") {
  if (!mpi_binary()) {
    ATTN_SKIP(
        "no MPI build: make test builds build/attn-mpi when mpicxx is installed (apt-get install libopenmpi-dev openmpi-bin), not under SANITIZE=1");
  }
  test::ScratchDir dir;
  test::write_tiny_corpus(dir.path(), "train", 300, 3);
  test::write_tiny_corpus(dir.path(), "valid", 20, 4);
  const fs::path run = dir.path() / "run", out = dir.path() / "mpirun.out";
  std::vector<std::string> args = test::tiny_train_args(dir.path(), "run", {"--valid-every", "2", "--log-every", "1"});
  const std::string command = mpirun(2, true) + test::shell_words(args) + " >" + out.string() + " 2>&1";
  test::ChildProcess job({"-c", command}, dir.path() / "sh.out", "/bin/sh");
  REQUIRE(job.wait_until([&] { return fs::exists(run / "last.attn") && fs::exists(run / "best.attn"); }));
  // The ranks are the processes whose command line starts with the MPI binary and names this run.
  const std::string find = "pgrep -f '^" + std::string(mpi_binary()) + " train .*" + run.string() + "' | tail -n 1";
  std::FILE* pipe = ::popen(find.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char pid_text[32] = "";
  REQUIRE(std::fgets(pid_text, sizeof pid_text, pipe) != nullptr);
  ::pclose(pipe);
  REQUIRE(::kill(std::atoi(pid_text), SIGKILL) == 0);
  job.wait_until([] { return false; }, 60.0);  // returns as soon as the job has ended
  REQUIRE_FALSE(job.running());
  const int status = job.wait();
  const std::string said = test::slurp(out);
  INFO(said);
  REQUIRE(status != 0);
  REQUIRE(said.find("signal 9") != std::string::npos);
  REQUIRE_NOTHROW(weights(run / "last.attn"));
  REQUIRE_NOTHROW(weights(run / "best.attn"));
}
