// The decoder queue of attn serve without HTTP: every job it takes is
// answered — a result, the error its work threw, or decode::Cancelled when it
// was given up on — so no waiter ever meets a promise destroyed unset.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
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
  explicit TinyQueue(BatchOptions options = one_decoder(), BatchSearch search = {}) {
    set_threads(1);
    Rng init(1);
    model.initialize(init);
    queue = std::make_unique<DecodeQueue>(std::vector<model::Seq2Seq*>{&model}, options, std::move(search));
  }
  static BatchOptions one_decoder() {
    BatchOptions options;
    options.decoders = 1;
    options.max_wait = std::chrono::microseconds(0);
    return options;
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

// A stand-in for the beam search that takes one step when the test says so
// (step() returns once it is taken): it drops the sentences whose job was given
// up on, as the search does, then finishes the lowest-numbered one left.
class SteppedSearch {
 public:
  BatchSearch function() {
    return [this](nn::StepContext&, const model::Seq2Seq&, const std::vector<std::vector<std::int32_t>>& sources,
                  const decode::SearchOptions& options, const decode::SentenceDone& done) {
      std::vector<std::size_t> left(sources.size());
      for (std::size_t k = 0; k < left.size(); ++k) left[k] = k;
      while (!left.empty()) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return allowed_ > taken_; });
        std::erase_if(left, [&](std::size_t k) { return options.drop && options.drop(k); });
        if (!left.empty()) {
          done(left.front(), {decode::Hypothesis{{static_cast<std::int32_t>(sources[left.front()].size())}, 0.f, 0.f}});
          left.erase(left.begin());
        }
        ++taken_;
        changed_.notify_all();
      }
    };
  }
  void step() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++allowed_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return taken_ == allowed_; });
  }
  // Every further step is taken at once (a failed check leaves no decoder waiting).
  void run_out() {
    std::lock_guard<std::mutex> lock(mutex_);
    allowed_ = INT32_MAX;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int allowed_ = 0, taken_ = 0;
};

template <typename Future>
bool ready(const Future& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

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

TEST_CASE("decode queue: a job's sentences leave the queued count before its answer is handed over, not with its batch",
          "[serve][queue]") {
  // One batch of three jobs (the decoder waits for four sentences), decoded
  // longest first: A (3 subwords), C (2), then B's two sentences (1 each).
  struct SteppedQueue {
    SteppedSearch stepped;
    TinyQueue q;
    explicit SteppedQueue(BatchOptions options) : q(options, stepped.function()) {}
    ~SteppedQueue() { stepped.run_out(); }  // before q's decoder is joined
  };
  BatchOptions options = TinyQueue::one_decoder();
  options.max_batch = 4;
  options.max_wait = std::chrono::seconds(60);
  SteppedQueue fixture(options);
  SteppedSearch& stepped = fixture.stepped;
  TinyQueue& q = fixture.q;
  auto a = q.queue->translate(0, {{3, 4, 5}}, beam(1), 1);
  REQUIRE(a);
  REQUIRE(q.queue->queued_sentences() == 1);
  auto b = q.queue->translate(0, {{6}, {7}}, beam(1), 2);
  REQUIRE(b);
  REQUIRE(q.queue->queued_sentences() == 3);
  auto c = q.queue->translate(0, {{8, 9}}, beam(1), 3);
  REQUIRE(c);
  REQUIRE(q.queue->queued_sentences() == 4);

  stepped.step();  // A is done; its answer is handed over while the batch goes on
  REQUIRE(ready(a->result));
  REQUIRE(a->result.get()[0][0].tokens == std::vector<std::int32_t>{3});
  REQUIRE(q.queue->queued_sentences() == 3);

  c->abandoned->store(true);  // C's client leaves; the next step drops C and finishes B's first sentence
  stepped.step();
  REQUIRE(ready(c->result));
  REQUIRE_THROWS_AS(c->result.get(), decode::Cancelled);
  REQUIRE(!ready(b->result));
  REQUIRE(q.queue->queued_sentences() == 2);  // B's two sentences: one decoded, its answer not yet whole

  stepped.step();
  REQUIRE(ready(b->result));
  REQUIRE(b->result.get().size() == 2);
  REQUIRE(q.queue->queued_sentences() == 0);
}

TEST_CASE("decode queue: a task's sentences leave the queued count before it is reported done", "[serve][queue]") {
  TinyQueue q;
  std::promise<void> gate;
  auto task = q.queue->run(
      3, [opened = gate.get_future().share()] { opened.wait(); }, 1);
  REQUIRE(task);
  REQUIRE(q.queue->queued_sentences() == 3);
  gate.set_value();
  task->done.get();
  REQUIRE(q.queue->queued_sentences() == 0);
}
