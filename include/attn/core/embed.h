// ATTN_EMBED(symbol, "path"): a file's bytes built into the binary, so that a
// program that serves or writes pages reads no file at run time. The path is
// from the repository root (make runs there); the assembler's .incbin copies
// the file into .rodata when the object is compiled, and ATTN_EMBEDDED(symbol)
// is its text. The compiler's dependency files do not see .incbin: the
// Makefile lists the embedded files as prerequisites of the objects that
// embed them (and ccache compiles such objects without its cache).
// Use it at namespace scope, once per symbol in the program.
#pragma once
#include <cstdint>
#include <string_view>

#define ATTN_EMBED(symbol, path)                                                           \
  asm(".pushsection .rodata\n"                                                             \
      ".global " #symbol "_bytes\n.hidden " #symbol "_bytes\n" #symbol "_bytes:\n"         \
      ".incbin \"" path "\"\n" #symbol "_bytes_end:\n"                                     \
      ".balign 8\n.global " #symbol "_size\n.hidden " #symbol "_size\n" #symbol "_size:\n" \
      ".8byte " #symbol "_bytes_end - " #symbol "_bytes\n"                                 \
      ".popsection\n");                                                                    \
  extern "C" const char symbol##_bytes[];                                                  \
  extern "C" const std::uint64_t symbol##_size

#define ATTN_EMBEDDED(symbol) std::string_view(symbol##_bytes, static_cast<std::size_t>(symbol##_size))
