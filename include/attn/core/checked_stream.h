// Streams that remember why a write failed. stdio keeps only a sticky error
// flag: by the time a caller checks ferror, errno has long been overwritten,
// and the user would read "Success" or a guessed "Input/output error" instead
// of the disk being full. These streams record the errno of the first failed
// write(2), so every "cannot write" message can give the OS's real reason.
#pragma once
#include <cstdio>
#include <string>

namespace attn {

// A buffered stream writing to `fd` (closed with the stream). The errno of
// its first failed write is stored in *first_errno (0 while none failed),
// which must outlive the stream.
std::FILE* open_checked_stream(int fd, int* first_errno);

// Replaces stdout by a checked stream on file descriptor 1 (glibc allows
// assigning stdout) and points std::cout at it, so the commands' printf and
// fwrite, and CLI11's --help and --version, are all checked. Called by main first.
void check_standard_output();

// Flushes stdout; throws Error "cannot write WHAT to standard output: REASON"
// when any write to it failed.
void require_standard_output_written(const std::string& what);

// The reason of the first failed write to stdout (std::cout included),
// flushed first; empty when none failed.
std::string standard_output_failure();

}  // namespace attn
