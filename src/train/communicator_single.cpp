// One process: rank 0 of 1, every collective the identity. The MPI build
// links src/mpi/communicator_mpi.cpp instead (see communicator.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "attn/train/communicator.h"

namespace attn::train {

struct Communicator::Impl {};

Communicator::Communicator() : impl_(std::make_unique<Impl>()) {}
Communicator::~Communicator() = default;

Communicator& Communicator::world() {
  static Communicator single;
  return single;
}

int Communicator::rank() const { return 0; }
int Communicator::size() const { return 1; }
std::string Communicator::describe() const { return ""; }
void Communicator::sum(std::span<double>) {}
std::vector<std::string> Communicator::gather(const std::string& bytes) { return {bytes}; }

void Communicator::abort(const std::string& message, int status) {
  std::fprintf(stderr, "attn: error: %s\n", message.c_str());
  std::exit(status);
}

struct Communicator::GradientSum::Requests {};

Communicator::GradientSum::GradientSum(Communicator& comm, std::span<float> grads,
                                       std::vector<std::pair<std::int64_t, std::int64_t>> schedule)
    : comm_(comm), grads_(grads), schedule_(std::move(schedule)), requests_(std::make_unique<Requests>()) {}
Communicator::GradientSum::~GradientSum() = default;
void Communicator::GradientSum::start(std::size_t chunk) { next_ = std::max(next_, chunk + 1); }
void Communicator::GradientSum::finish() { next_ = 0; }

}  // namespace attn::train
