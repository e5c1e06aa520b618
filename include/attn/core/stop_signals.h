// The signals that ask attn to stop: Ctrl-C (SIGINT), kill and service
// managers (SIGTERM), and a closing terminal or ssh session (SIGHUP). Every
// command treats them alike: train saves a resumable checkpoint, serve
// drains its queue, the others remove their temporary files and end as the
// signal would have ended them. One list, and the one place that installs
// handlers for it, so no command forgets a signal or another's handler.
//
// Handlers are installed with sigaction and SA_RESTART (a read or write the
// signal interrupts goes on, as with signal()); a handler may only call
// async-signal-safe functions.
#pragma once
#include <signal.h>

#include <array>
#include <span>

namespace attn {

std::span<const int> stop_signals();

using StopHandler = void (*)(int signal_number);

// Installs `handler` for every stop signal for the lifetime of the scope,
// then puts back the handlers it replaced. Scopes nest (train's inside
// main's): the innermost one is in force.
class StopSignalScope {
 public:
  explicit StopSignalScope(StopHandler handler);
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

 private:
  std::array<struct sigaction, 3> previous_{};
};

// Installs `handler` for every stop signal for the rest of the process
// (main's: commands without a scope of their own).
void install_stop_handler(StopHandler handler);

// Async-signal-safe, for a handler that has done its part: the signal's
// default action (the process ends as the signal would have ended it).
void end_as_signal(int signal_number);

// A stop request: while it lives, a stop signal is recorded, not acted on,
// and the loop that owns it stops at its next safe point. Its signal starts
// at 0 (a request of an earlier scope is forgotten).
class StopRequest {
 public:
  StopRequest();
  bool requested() const { return signal() != 0; }
  // The latest stop signal received while the request lives, or 0.
  int signal() const;

 private:
  StopSignalScope scope_;
};

// The signal of the live StopRequest (0 when none, or none arrived), for
// code that waits on it without owning it.
int pending_stop_signal();

}  // namespace attn
