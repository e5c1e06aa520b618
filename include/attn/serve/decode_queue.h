// The decoder of `attn serve`: HTTP threads submit work, decoder threads
// (one by default) run it, so requests from many clients are decoded together (batched across
// clients, as Marian's and CTranslate2's servers do) and the products use every
// core (--threads) for one batch at a time.
//
// A translation job's sentences wait until the batch holds max_batch sentences
// or the oldest has waited max_wait; jobs for the same model and search options
// are merged into one beam search. Other work (attention maps) runs alone, in
// arrival order. The queue holds at most max_queued sentences: beyond that
// submit() refuses (the server answers 429). A job its client gave up on (the
// request timed out, or the client left) is skipped when its turn comes; in a
// running search its sentences leave the batch at the next step, and a search
// whose every job was given up on stops there.
//
// Fair share: each job names its client (a connection), and each client is
// charged the decoder time its jobs took (a batch's time split by hypotheses,
// sentences × beam). A free decoder takes the oldest job of the client charged
// least among those no decoder works for; a client new to the queue starts at
// the least charge of the clients in it, so a new connection per request gains
// no place, and a client with nothing queued or running is forgotten. A request
// is queued as pieces of at most piece_hypotheses hypotheses (at least one
// sentence); a batch takes further pieces of a client already in it, or of
// one another decoder works for, only when the queue knows no other client.
// So one large request, or one that is sent and abandoned again and again,
// holds one decoder for one small piece at a time, and a lone large request is
// still decoded in full batches on every decoder.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"

namespace attn::serve {

struct BatchOptions {
  // Two decoders of one thread each, batches of at most 16: on 2 cores, 16 clients
  // sending one sentence each got 1.5x the sentences/s of one decoder on both
  // threads with batches of 64 (docs/results/decoding-speed.md), and 64 clients 1.2x.
  std::int64_t max_batch = 16;               // sentences decoded together
  std::chrono::microseconds max_wait{5000};  // how long a lone sentence waits for company
  std::int64_t max_queued = 1024;            // sentences waiting, over all jobs
  int decoders = 2;                          // threads taking batches, --threads split between them
  // One sentence at translate's default beam 5 (and at any wider beam): while
  // others are known, a client adds about what one ordinary request does to
  // each batch. Beside a client sending 16 sentences and leaving, again and
  // again, ordinary clients kept 0.70x of their rate at 5, 0.63x at 16
  // (three sentences at beam 5; docs/serve.md).
  std::int64_t piece_hypotheses = 5;
};

using decode::Hypotheses;

// The search a batch runs: decode::beam_search's signature, so a test can put a
// stand-in that finishes each sentence when it says.
using BatchSearch =
    std::function<void(nn::StepContext&, const model::Seq2Seq&, const std::vector<std::vector<std::int32_t>>&,
                       const decode::SearchOptions&, const decode::SentenceDone&)>;

class DecodeQueue {
 public:
  // models: every servable model, indexed by submit's `model`; they outlive the
  // queue. search: decode::beam_search unless given.
  DecodeQueue(std::vector<model::Seq2Seq*> models, BatchOptions options, BatchSearch search = {});
  ~DecodeQueue();  // finishes every queued job, then stops the thread
  DecodeQueue(const DecodeQueue&) = delete;
  DecodeQueue& operator=(const DecodeQueue&) = delete;

  // Translations of `sources` (subword ids, none empty) with model `model`.
  // Empty when the queue is full. The future's value is one entry per source;
  // it holds the exception if decoding threw.
  struct Submitted {
    std::future<std::vector<Hypotheses>> result;
    std::shared_ptr<std::atomic<bool>> abandoned;  // set it to drop the job if it has not started
  };
  std::optional<Submitted> translate(std::size_t model, std::vector<std::vector<std::int32_t>> sources,
                                     const decode::SearchOptions& search, std::uint64_t client = 0);

  // Runs `work` on the decoder thread (for work that is not batched); counts
  // as `sentences` in the queue. Empty when the queue is full.
  struct SubmittedTask {
    std::future<void> done;
    std::shared_ptr<std::atomic<bool>> abandoned;
  };
  std::optional<SubmittedTask> run(std::int64_t sentences, std::function<void()> work, std::uint64_t client = 0);

  // Sentences submitted and not yet answered, waiting or being decoded. A
  // job's sentences leave the count before its answer is handed over, so a
  // client holding its answer never finds them still counted.
  std::int64_t queued_sentences() const;
  // Gives up every job, queued or running (the server's drain deadline passed):
  // running searches stop at their next step, queued ones are skipped.
  void cancel_all() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  // A translation request's answer, gathered from its pieces.
  struct Gather {
    std::mutex mutex;
    std::vector<Hypotheses> results;
    std::size_t pieces_left = 0;
    bool failed = false;
    std::promise<std::vector<Hypotheses>> promise;
    void deliver(std::size_t offset, std::vector<Hypotheses> part);
    void fail(std::exception_ptr error);
  };
  struct Job {
    bool is_translation = true;
    std::size_t model = 0;
    decode::SearchOptions search;
    std::vector<std::vector<std::int32_t>> sources;
    std::shared_ptr<Gather> gather;  // where the translations go, from offset on
    std::size_t offset = 0;
    std::function<void()> work;
    std::promise<void> work_done;
    bool answered = false;  // its piece delivered, or its gather or work_done given an error
    std::int64_t sentences = 0;
    std::uint64_t client = 0;
    std::chrono::steady_clock::time_point queued_at;
    std::shared_ptr<std::atomic<bool>> abandoned = std::make_shared<std::atomic<bool>>(false);
    std::int64_t hypotheses() const { return is_translation ? sentences * std::max(1, search.beam) : sentences; }
  };
  bool admit(std::int64_t sentences);  // under mutex_: reserves room, or refuses
  void enrol(std::uint64_t client);    // under mutex_: a client new to the queue starts at the least charge
  void loop();
  // Takes the front job and, for a translation, the later ones it can share a
  // beam search with, waiting up to max_wait for the batch to fill. Under lock.
  std::vector<Job> take_batch(std::unique_lock<std::mutex>& lock);
  // The job a free decoder takes first: the oldest of the least charged client no decoder works for.
  std::deque<Job>::iterator next_job();
  // After a batch took `seconds`: charges its clients, forgets those with nothing left. Under lock.
  void settle(const std::vector<Job>& batch, double seconds);
  void decode_batch(std::vector<Job>& batch);
  // Gives `job` the error as its answer unless it has one (a promise is never
  // left unset); a translation's other pieces are then given up on.
  void answer_with(Job& job, std::exception_ptr error);
  // Takes a job's sentences off the count; called once per job, just before its answer is handed over.
  void unqueue(const Job& job);

  std::vector<model::Seq2Seq*> models_;
  BatchOptions options_;
  BatchSearch search_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;
  std::int64_t queued_ = 0;  // the sentences of the jobs not yet answered
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};
  std::map<std::uint64_t, int> busy_;        // client → decoders working for it
  std::map<std::uint64_t, double> charged_;  // client → decoder seconds its jobs took while it was known
  std::vector<std::thread> threads_;
};

// Whether two searches can share a batch (same beam, length penalty, limits, n-best).
bool same_search(const decode::SearchOptions& a, const decode::SearchOptions& b);

}  // namespace attn::serve
