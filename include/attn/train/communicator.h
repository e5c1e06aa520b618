// The ranks of a data-parallel training run and the few collective operations
// it needs. attn train under `mpirun -np N` (a binary built with
// `make MPI=1`) is one rank of N; otherwise it is rank 0 of 1 and every
// operation below is the identity. Only the main thread calls these.
//
// Two implementations with one interface, chosen at link time:
// src/train/communicator_single.cpp (in libattn, the default) and
// src/mpi/communicator_mpi.cpp (linked before libattn by `make MPI=1`, so the
// single-process one is never pulled from the archive).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace attn::train {

class Communicator {
 public:
  // The process's communicator: the MPI world (initialised on first use,
  // finalised at exit) or the single process.
  static Communicator& world();

  int rank() const;
  int size() const;
  bool is_root() const { return rank() == 0; }

  // Threads per rank and the like go to the log; "" for one process.
  std::string describe() const;

  // values summed over ranks, in place, the same on every rank. A value only
  // rank 0 contributes (the others give 0) is thereby broadcast exactly.
  void sum(std::span<double> values);
  // Every rank's bytes, in rank order, on rank 0; empty on the others.
  std::vector<std::string> gather(const std::string& bytes);
  // Ends every rank: one message on stderr, exit status `status`.
  [[noreturn]] void abort(const std::string& message, int status);

  // The all-reduce of the flat gradient buffer, in chunks: `schedule` lists
  // the chunks [begin, end) in the order backward finishes them (the same on
  // every rank, so the collectives match); start(i) sums chunk i in the
  // background as soon as it is done, finish() starts the chunks not started
  // yet (in schedule order) and waits for all. Nothing may write a started
  // chunk until finish() returns.
  class GradientSum {
   public:
    GradientSum(Communicator& comm, std::span<float> grads,
                std::vector<std::pair<std::int64_t, std::int64_t>> schedule);
    GradientSum(const GradientSum&) = delete;
    GradientSum& operator=(const GradientSum&) = delete;
    ~GradientSum();
    void start(std::size_t chunk);
    std::size_t started() const { return next_; }  // chunks [0, started()) are in flight or done
    void finish();
    double wait_seconds() const { return wait_s_; }  // spent blocked in finish(), over all calls

   private:
    Communicator& comm_;
    std::span<float> grads_;
    std::vector<std::pair<std::int64_t, std::int64_t>> schedule_;
    std::size_t next_ = 0;  // chunks [0, next_) are started
    struct Requests;        // the implementation's handles of the chunks in flight
    std::unique_ptr<Requests> requests_;
    double wait_s_ = 0.0;
  };

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

 private:
  Communicator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::train
