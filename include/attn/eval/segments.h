// Reading hypothesis and reference files the way sacreBLEU's command line
// does: UTF-8, one segment per '\n'-terminated line (a last line without
// '\n' counts), trailing whitespace stripped (Python's rstrip(), so a CR
// goes too). A byte-order mark stays, as Python's "utf-8" codec keeps it.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attn/core/function_ref.h"

namespace attn::eval {

// Splits `content` into segments. `origin` names the source in errors.
// Throws Error naming origin and line when a line is not valid UTF-8.
std::vector<std::string> split_segments(const std::string& content, const std::string& origin);

// The segments of a file ("-": standard input). Throws Error when it cannot
// be read or is not valid UTF-8.
std::vector<std::string> read_segments(const std::string& path);

// The references a segment is scored against. An empty one stands for a
// missing one (sacreBLEU's placeholder for fewer references on a segment);
// when all are empty the segment has one empty reference (length 0), as a
// blank line of a single reference file is scored by sacreBLEU.
std::vector<std::string_view> segment_references(std::span<const std::string> references);

// Calls visit(hypothesis, its references) for the segments of a corpus in
// order; references[k][i] is the k-th reference of segment i. Throws Error
// when a reference stream is not as long as the hypotheses.
void for_each_segment(std::span<const std::string> hypotheses, std::span<const std::vector<std::string>> references,
                      FunctionRef<void(std::string_view, std::span<const std::string>)> visit);

}  // namespace attn::eval
