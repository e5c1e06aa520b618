#include "attn/serve/decode_queue.h"

#include <algorithm>
#include <exception>

#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/nn/context.h"

namespace attn::serve {

bool same_search(const decode::SearchOptions& a, const decode::SearchOptions& b) {
  return a.beam == b.beam && a.lenpen == b.lenpen && a.max_len_a == b.max_len_a && a.max_len_b == b.max_len_b &&
         a.nbest == b.nbest && a.no_repeat_ngram == b.no_repeat_ngram;
}

DecodeQueue::DecodeQueue(std::vector<model::Seq2Seq*> models, BatchOptions options, BatchSearch search)
    : models_(std::move(models)), options_(options), search_(std::move(search)) {
  if (!search_)
    search_ = [](nn::StepContext& ctx, const model::Seq2Seq& model,
                 const std::vector<std::vector<std::int32_t>>& sources, const decode::SearchOptions& options,
                 const decode::SentenceDone& done) { decode::beam_search(ctx, model, sources, options, done); };
  // The decoders share the threads --threads gave the caller.
  const int threads = num_threads();
  const int decoders = std::clamp(options_.decoders, 1, threads);  // num_threads() is at least 1
  for (int i = 0; i < decoders; ++i)
    threads_.emplace_back([this, threads, decoders, i] {
      set_threads(threads_of_decoder(threads, decoders, i));
      loop();
    });
}

DecodeQueue::~DecodeQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool DecodeQueue::admit(std::int64_t sentences) {
  // One request larger than the whole queue is still taken when the queue is
  // empty, so a limit below --max-sentences cannot refuse everything.
  if (queued_ > 0 && queued_ + sentences > options_.max_queued) return false;
  queued_ += sentences;
  return true;
}

void DecodeQueue::Gather::deliver(std::size_t offset, std::vector<Hypotheses> part) {
  std::lock_guard<std::mutex> lock(mutex);
  if (failed) return;
  std::move(part.begin(), part.end(), results.begin() + static_cast<std::ptrdiff_t>(offset));
  if (--pieces_left == 0) promise.set_value(std::move(results));
}

void DecodeQueue::Gather::fail(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (failed || pieces_left == 0) return;
  failed = true;
  promise.set_exception(error);
}

std::optional<DecodeQueue::Submitted> DecodeQueue::translate(std::size_t model,
                                                             std::vector<std::vector<std::int32_t>> sources,
                                                             const decode::SearchOptions& search,
                                                             std::uint64_t client) {
  auto gather = std::make_shared<Gather>();
  gather->results.resize(sources.size());
  const std::int64_t per_piece = std::min(options_.max_batch, options_.piece_hypotheses / std::max(1, search.beam));
  const std::size_t piece = static_cast<std::size_t>(std::max<std::int64_t>(1, per_piece));
  gather->pieces_left = (sources.size() + piece - 1) / piece;
  Submitted submitted{gather->promise.get_future(), std::make_shared<std::atomic<bool>>(false)};
  std::vector<Job> jobs;
  for (std::size_t at = 0; at < sources.size(); at += piece) {
    Job job;
    job.client = client;
    job.model = model;
    job.search = search;
    job.gather = gather;
    job.offset = at;
    job.abandoned = submitted.abandoned;
    const std::size_t end = std::min(sources.size(), at + piece);
    job.sources.assign(std::make_move_iterator(sources.begin() + static_cast<std::ptrdiff_t>(at)),
                       std::make_move_iterator(sources.begin() + static_cast<std::ptrdiff_t>(end)));
    job.sentences = static_cast<std::int64_t>(job.sources.size());
    jobs.push_back(std::move(job));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!admit(static_cast<std::int64_t>(sources.size()))) return std::nullopt;
    enrol(client);
    for (Job& job : jobs) {
      job.queued_at = std::chrono::steady_clock::now();
      jobs_.push_back(std::move(job));
    }
  }
  changed_.notify_all();
  return submitted;
}

std::optional<DecodeQueue::SubmittedTask> DecodeQueue::run(std::int64_t sentences, std::function<void()> work,
                                                           std::uint64_t client) {
  Job job;
  job.client = client;
  job.is_translation = false;
  job.sentences = sentences;
  job.work = std::move(work);
  SubmittedTask submitted{job.work_done.get_future(), job.abandoned};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!admit(sentences)) return std::nullopt;
    enrol(client);
    job.queued_at = std::chrono::steady_clock::now();
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
  return submitted;
}

std::int64_t DecodeQueue::queued_sentences() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

void DecodeQueue::enrol(std::uint64_t client) {
  if (charged_.count(client)) return;
  const auto least = std::min_element(charged_.begin(), charged_.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  charged_[client] = least == charged_.end() ? 0.0 : least->second;
}

std::deque<DecodeQueue::Job>::iterator DecodeQueue::next_job() {
  auto best = jobs_.begin();
  std::pair<int, double> best_rank{INT32_MAX, 0};
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    const auto busy = busy_.find(it->client);
    const std::pair<int, double> rank{busy == busy_.end() ? 0 : busy->second, charged_.at(it->client)};
    if (rank < best_rank) {  // strictly: the oldest job of the best client
      best = it;
      best_rank = rank;
    }
  }
  return best;
}

std::vector<DecodeQueue::Job> DecodeQueue::take_batch(std::unique_lock<std::mutex>& lock) {
  std::vector<Job> batch;
  const auto joins = [&](const Job& j) {
    return j.is_translation && j.model == batch.front().model && same_search(j.search, batch.front().search);
  };
  const auto sentences = [&] {
    std::int64_t n = 0;
    for (const Job& j : batch) n += j.sentences;
    return n;
  };
  const auto in_batch = [&](std::uint64_t client) {
    return std::any_of(batch.begin(), batch.end(), [&](const Job& j) { return j.client == client; });
  };
  const auto first = next_job();
  batch.push_back(std::move(*first));
  jobs_.erase(first);
  if (!batch.front().is_translation) return batch;
  // Later jobs that fit join; the others keep their place in the queue. A
  // client's further pieces join only while it is the one client the queue
  // knows: another client's next request, though not sent yet, may come any moment.
  // Nor does a piece join while another decoder works for its client: a
  // client with many pieces queued would otherwise ride in every batch of both
  // decoders, while one that waits for each answer is queued only part of
  // the time (a 16-sentence request sent and abandoned again and again cost
  // the Transformer's ordinary clients 0.83x on its own).
  const auto gather = [&] {
    for (auto it = jobs_.begin(); it != jobs_.end() && sentences() < options_.max_batch;) {
      const bool own_piece_may_join = charged_.size() == 1 || (!in_batch(it->client) && busy_.count(it->client) == 0);
      if (joins(*it) && sentences() + it->sentences <= options_.max_batch && own_piece_may_join) {
        batch.push_back(std::move(*it));
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
  };
  const auto deadline = batch.front().queued_at + options_.max_wait;
  for (;;) {
    gather();
    if (sentences() >= options_.max_batch || stopping_) return batch;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      gather();  // a job may have arrived with the deadline
      return batch;
    }
  }
}

void DecodeQueue::decode_batch(std::vector<Job>& batch) {
  // A job given up on before its turn is answered now, not when the batch ends.
  std::vector<std::pair<std::size_t, std::size_t>> where;  // (job, sentence) of each decoded source
  for (std::size_t j = 0; j < batch.size(); ++j) {
    if (batch[j].abandoned->load() || cancelled_)
      answer_with(batch[j], std::make_exception_ptr(decode::Cancelled()));
    else
      for (std::size_t s = 0; s < batch[j].sources.size(); ++s) where.emplace_back(j, s);
  }
  if (where.empty()) return;
  // Longest first, as translate does: similar lengths pad least.
  std::stable_sort(where.begin(), where.end(), [&](const auto& a, const auto& b) {
    return batch[a.first].sources[a.second].size() > batch[b.first].sources[b.second].size();
  });
  std::vector<std::vector<std::int32_t>> sources;
  for (const auto& [j, s] : where) sources.push_back(std::move(batch[j].sources[s]));
  model::Seq2Seq& model = *models_[batch.front().model];
  thread_local Arena arena;
  arena.reset();
  Rng rng(0);
  nn::StepContext ctx{model.params(), arena, rng, false};
  // Each job is answered as soon as its last sentence leaves the search, so its client can
  // send the next request while the batch's longer sentences go on (another decoder takes it).
  std::vector<std::vector<Hypotheses>> results(batch.size());
  std::vector<std::size_t> left(batch.size(), 0);
  for (std::size_t j = 0; j < batch.size(); ++j) results[j].resize(batch[j].sources.size());
  for (const auto& [j, s] : where) ++left[j];
  // A job given up on leaves the batch at the next step, answered Cancelled
  // there: its sentences no longer cost the others' steps, and a search whose
  // every job was given up on ends there. Only the drain's deadline cancels the
  // search (every job fails): a job already answered may be one piece of a
  // request whose other pieces still wait.
  const auto cancelled = std::make_exception_ptr(decode::Cancelled());
  decode::SearchOptions search = batch.front().search;
  search.stop = [&] { return cancelled_.load(); };
  search.drop = [&](std::size_t k) {
    Job& job = batch[where[k].first];
    if (!job.abandoned->load()) return false;
    answer_with(job, cancelled);
    return true;
  };
  search_(ctx, model, sources, search, [&](std::size_t k, const Hypotheses& best) {
    const auto [j, s] = where[k];
    Job& job = batch[j];
    results[j][s] = best;
    if (--left[j] > 0 || job.answered) return;
    if (job.abandoned->load()) {
      answer_with(job, cancelled);
      return;
    }
    unqueue(job);
    job.answered = true;
    job.gather->deliver(job.offset, std::move(results[j]));
  });
}

void DecodeQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and everything queued is done
    std::vector<Job> batch = take_batch(lock);
    for (const Job& j : batch) ++busy_[j.client];
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    try {
      if (batch.front().is_translation) {
        decode_batch(batch);
      } else if (!batch.front().abandoned->load() && !cancelled_) {
        batch.front().work();
        unqueue(batch.front());
        batch.front().answered = true;
        batch.front().work_done.set_value();
      }
    } catch (...) {
      // Every job of the batch learns what went wrong; the server answers 500, the queue goes on.
      for (Job& j : batch) answer_with(j, std::current_exception());
    }
    // A job skipped (given up on, or the drain's deadline passed) still gets an
    // answer: a promise destroyed unset would reach its waiter as
    // std::future_error ("Broken promise"), a 500, where a drained request must get 503.
    for (Job& j : batch) answer_with(j, std::make_exception_ptr(decode::Cancelled()));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    lock.lock();
    settle(batch, took.count());
  }
}

void DecodeQueue::answer_with(Job& job, std::exception_ptr error) {
  if (job.answered) return;
  job.answered = true;
  unqueue(job);
  if (job.is_translation) {
    // Its request has its answer (the error): the other pieces are skipped, not decoded for no one.
    job.abandoned->store(true);
    job.gather->fail(error);
  } else {
    job.work_done.set_exception(error);
  }
}

void DecodeQueue::unqueue(const Job& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  queued_ -= job.sentences;
}

void DecodeQueue::settle(const std::vector<Job>& batch, double seconds) {
  std::int64_t hypotheses = 0;
  for (const Job& j : batch) hypotheses += j.hypotheses();
  for (const Job& j : batch) {
    charged_[j.client] += seconds * static_cast<double>(j.hypotheses()) /
                          static_cast<double>(std::max<std::int64_t>(1, hypotheses));
    if (--busy_[j.client] == 0) busy_.erase(j.client);
  }
  // A client with nothing queued or running is forgotten (the map stays as small as the queue).
  for (const Job& j : batch)
    if (!busy_.count(j.client) &&
        std::none_of(jobs_.begin(), jobs_.end(), [&](const Job& q) { return q.client == j.client; }))
      charged_.erase(j.client);
}

}  // namespace attn::serve
