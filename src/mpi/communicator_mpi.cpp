// The MPI world (make MPI=1): MPI is initialised on first use with
// MPI_THREAD_FUNNELED (OpenMP threads compute, only the main thread talks)
// and finalised at exit. Errors inside MPI end the job (MPI_ERRORS_ARE_FATAL):
// when a rank dies, mpirun ends the others and names the rank.
#define OMPI_SKIP_MPICXX 1  // the C API only; its C++ bindings do not compile warning-free
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "attn/core/error.h"
#include "attn/core/threads.h"
#include "attn/train/communicator.h"

namespace attn::train {

namespace {
int mpi_count(std::int64_t n) {
  if (n > std::numeric_limits<int>::max())
    throw Error("an MPI message of " + std::to_string(n) + " elements is too long");
  return static_cast<int>(n);
}
}  // namespace

struct Communicator::Impl {
  int rank = 0, size = 1;
};

Communicator::Communicator() : impl_(std::make_unique<Impl>()) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &impl_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl_->size);
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Communicator& Communicator::world() {
  static Communicator mpi;
  return mpi;
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

std::string Communicator::describe() const {
  if (impl_->size == 1) return "";
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  return "MPI: " + std::to_string(impl_->size) + " ranks, " + std::to_string(num_threads()) +
         " threads each (rank 0 on " + host + ")";
}

void Communicator::sum(std::span<double> values) {
  if (impl_->size == 1 || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_count(static_cast<std::int64_t>(values.size())), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
}

std::vector<std::string> Communicator::gather(const std::string& bytes) {
  if (impl_->size == 1) return {bytes};
  const int mine = mpi_count(static_cast<std::int64_t>(bytes.size()));
  std::vector<int> lengths(impl_->rank == 0 ? impl_->size : 0);
  MPI_Gather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  std::int64_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = mpi_count(total);
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(bytes.data(), mine, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> parts;
  for (std::size_t r = 0; r < lengths.size(); ++r) parts.push_back(all.substr(offsets[r], lengths[r]));
  return parts;
}

void Communicator::abort(const std::string& message, int status) {
  std::fprintf(stderr, "attn: error (rank %d of %d): %s\n", impl_->rank, impl_->size, message.c_str());
  std::fflush(stderr);
  if (impl_->size == 1) std::exit(status);
  MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);  // not reached
}

struct Communicator::GradientSum::Requests {
  std::vector<MPI_Request> in_flight;
};

Communicator::GradientSum::GradientSum(Communicator& comm, std::span<float> grads,
                                       std::vector<std::pair<std::int64_t, std::int64_t>> schedule)
    : comm_(comm), grads_(grads), schedule_(std::move(schedule)), requests_(std::make_unique<Requests>()) {}

Communicator::GradientSum::~GradientSum() {
  if (!requests_->in_flight.empty())
    MPI_Waitall(static_cast<int>(requests_->in_flight.size()), requests_->in_flight.data(), MPI_STATUSES_IGNORE);
}

void Communicator::GradientSum::start(std::size_t chunk) {
  if (comm_.size() == 1) {  // as the single-process build: the trainer asks started() which chunks are done
    next_ = std::max(next_, chunk + 1);
    return;
  }
  // Chunks start strictly in schedule order on every rank, so the collectives match.
  while (next_ <= chunk && next_ < schedule_.size()) {
    const auto [begin, end] = schedule_[next_++];
    if (end <= begin) continue;
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, grads_.data() + begin, mpi_count(end - begin), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                   &request);
    requests_->in_flight.push_back(request);
  }
  // Let the chunks in flight progress while backward goes on (no progress thread by default).
  int done = 0;
  if (!requests_->in_flight.empty())
    MPI_Testall(static_cast<int>(requests_->in_flight.size()), requests_->in_flight.data(), &done, MPI_STATUSES_IGNORE);
  if (done) requests_->in_flight.clear();
}

void Communicator::GradientSum::finish() {
  if (comm_.size() == 1) {
    next_ = 0;
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (!schedule_.empty()) start(schedule_.size() - 1);
  if (!requests_->in_flight.empty())
    MPI_Waitall(static_cast<int>(requests_->in_flight.size()), requests_->in_flight.data(), MPI_STATUSES_IGNORE);
  requests_->in_flight.clear();
  next_ = 0;
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace attn::train
