#include "attn/core/stop_signals.h"

#include <atomic>
#include <csignal>

namespace attn {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
static_assert(std::size(kSignals) == std::tuple_size_v<std::array<struct sigaction, 3>>);

std::atomic<int> g_stop_signal{0};  // lock-free, so async-signal-safe
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void record_stop_signal(int signal_number) { g_stop_signal.store(signal_number); }

// A new request's handler, its signal cleared before the handler is in force.
StopHandler cleared_recorder() {
  g_stop_signal.store(0);
  return record_stop_signal;
}

void install(StopHandler handler, std::span<struct sigaction> previous) {
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    ::sigaction(kSignals[i], &action, previous.empty() ? nullptr : &previous[i]);
}

}  // namespace

std::span<const int> stop_signals() { return kSignals; }

StopSignalScope::StopSignalScope(StopHandler handler) { install(handler, previous_); }

StopSignalScope::~StopSignalScope() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
}

void install_stop_handler(StopHandler handler) { install(handler, {}); }

void end_as_signal(int signal_number) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal_number, &action, nullptr);
  ::raise(signal_number);  // delivered once the handler that calls this returns
}

StopRequest::StopRequest() : scope_(cleared_recorder()) {}

int StopRequest::signal() const { return g_stop_signal.load(); }

int pending_stop_signal() { return g_stop_signal.load(); }

}  // namespace attn
