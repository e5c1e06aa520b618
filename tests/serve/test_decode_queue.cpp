// The decoder queue of attn serve without HTTP: every job it takes is
// answered — a result, the error its work threw, or decode::Cancelled when it
// was given up on — so no waiter ever meets a promise destroyed unset.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "../model/arch_variants.h"

#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/serve/decode_queue.h"

using namespace attn;
using namespace attn::serve;

namespace {

// One decoder of one thread (a tiny model gains nothing from more, and loses
// much when the machine is busy).
struct TinyQueue {
  int saved_threads = num_threads();
  model::Seq2Seq model{model::tiny_config("pre", false, false)};
  std::unique_ptr<DecodeQueue> queue;
  TinyQueue() {
    set_threads(1);
    Rng init(1);
    model.initialize(init);
    BatchOptions options;
    options.decoders = 1;
    options.max_wait = std::chrono::microseconds(0);
    queue = std::make_unique<DecodeQueue>(std::vector<model::Seq2Seq*>{&model}, options);
  }
  ~TinyQueue() {
    queue.reset();
    set_threads(saved_threads);
  }
};

// Holds the one decoder until release() (or the end of the scope).
struct Blocker {
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::atomic<bool> started{false};
  std::optional<DecodeQueue::SubmittedTask> task;
  explicit Blocker(DecodeQueue& q) {
    task = q.run(
        1,
        [this] {
          started = true;
          opened.wait();
        },
        99);
    REQUIRE(task);
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void release() {
    if (!released) gate.set_value();
    released = true;
  }
  ~Blocker() { release(); }
  bool released = false;
};

decode::SearchOptions beam(int n) {
  decode::SearchOptions s;
  s.beam = n;
  s.max_len_b = 4;
  return s;
}

}  // namespace

TEST_CASE("decode queue: every job given up at the drain deadline is answered Cancelled, never a broken promise",
          "[serve][nothing-lost-4]") {
  TinyQueue q;
  Blocker blocker(*q.queue);
  // Waiting behind the blocker when the deadline passes: a translation of
  // several pieces (one sentence each at beam 5) and a task.
  auto translation = q.queue->translate(0, {{3, 4, 5}, {6, 7}, {8}}, beam(5), 1);
  auto task = q.queue->run(
      1, [] {}, 2);
  REQUIRE(translation);
  REQUIRE(task);
  q.queue->cancel_all();
  blocker.release();
  blocker.task->done.get();  // the work that ran is answered with its own result
  REQUIRE_THROWS_AS(translation->result.get(), decode::Cancelled);
  REQUIRE_THROWS_AS(task->done.get(), decode::Cancelled);
}

TEST_CASE("decode queue: a job its client gave up on is answered Cancelled; the others are decoded in full",
          "[serve][nothing-lost-4]") {
  TinyQueue q;
  auto blocker = std::make_unique<Blocker>(*q.queue);
  auto left = q.queue->translate(0, {{3, 4, 5}, {6, 7}}, beam(5), 1);
  auto task_left = q.queue->run(
      1, [] {}, 2);
  auto kept = q.queue->translate(0, {{3, 4, 5}, {6, 7}, {8}}, beam(5), 3);
  REQUIRE(left);
  REQUIRE(task_left);
  REQUIRE(kept);
  left->abandoned->store(true);
  task_left->abandoned->store(true);
  blocker->release();
  REQUIRE_THROWS_AS(left->result.get(), decode::Cancelled);
  REQUIRE_THROWS_AS(task_left->done.get(), decode::Cancelled);
  // A request of several pieces is answered whole, each piece in its place.
  const std::vector<Hypotheses> found = kept->result.get();
  REQUIRE(found.size() == 3);
  for (const Hypotheses& h : found) REQUIRE(!h.empty());
}
