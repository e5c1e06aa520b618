// The signals that ask attn to stop: Ctrl-C (SIGINT), kill and service
// managers (SIGTERM), and a closing terminal or ssh session (SIGHUP). Every
// command treats them alike: train saves a resumable checkpoint, serve
// drains its queue, the others remove their temporary files and end as the
// signal would have ended them. One list, so no command forgets one.
#pragma once
#include <span>

namespace attn {

std::span<const int> stop_signals();

}  // namespace attn
