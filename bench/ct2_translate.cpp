// ct2_translate: CTranslate2's Translator on an `attn export --to ctranslate2`
// directory, with attn's BPE (its attn_bpe.json) turning text into tokens and
// back, and attn translate's search settings: the check that CTranslate2
// decodes an exported model as attn does, and the CTranslate2 side of
// `make bench PARTS=ctranslate2`. Built by bench/ctranslate2_build.sh.
//
//   ct2_translate DIR [--compute-type float32|int8_float32|...] [--beam 5] [--lenpen 1]
//                 [--max-len-a 2] [--max-len-b 10] [--batch-size 64] [--threads 1]
//                 [--inter-threads 1] [--max-input-len 250] [--max-positions 1024] < input > output
//
// --threads is CTranslate2's intra_threads (threads per model replica);
// --inter-threads its inter_threads (replicas, each decoding its own batches
// concurrently), so 2 cores run as 1×2 or 2×1.
//
// As attn translate does, the lines are sorted longest first and cut into
// batches of --batch-size, empty lines translate to empty lines, inputs are
// cut at --max-input-len subwords. attn limits each sentence to
// a·source_length + b tokens; CTranslate2 takes one limit per call, so each
// batch gets its longest sentence's (at batch size 1 the limits are attn's).
// The length penalty divides by the length with </s> counted, as attn's does
// (return_end_token, then </s> is dropped), and no minimum length is set.
// Left different: at the limit attn ends each hypothesis with </s> and
// CTranslate2 keeps its last token; attn never proposes <pad> or <s>.
// Prints the sentences/s of the decoding (after loading) on stderr.
#include <ctranslate2/translator.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "attn/text/bpe.h"

namespace {

struct Options {
  std::string dir;
  std::string compute_type = "float32";
  int beam = 5;
  float lenpen = 1.0f, max_len_a = 2.0f, max_len_b = 10.0f;
  std::size_t batch_size = 64, threads = 1, inter_threads = 1, max_input_len = 250;
  std::size_t max_positions = 1024;  // the model's (attn info): bounds the output as in attn
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "ct2_translate: %s\nusage: ct2_translate DIR [--compute-type T] [--beam K] [--lenpen P] "
               "[--max-len-a A] [--max-len-b B] [--batch-size N] [--threads N] [--inter-threads N] [--max-input-len N] "
               "[--max-positions N] < in > out\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      if (!o.dir.empty()) usage("one model directory only");
      o.dir = a;
      continue;
    }
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--compute-type")
      o.compute_type = v;
    else if (a == "--beam")
      o.beam = std::stoi(v);
    else if (a == "--lenpen")
      o.lenpen = std::stof(v);
    else if (a == "--max-len-a")
      o.max_len_a = std::stof(v);
    else if (a == "--max-len-b")
      o.max_len_b = std::stof(v);
    else if (a == "--batch-size")
      o.batch_size = std::stoul(v);
    else if (a == "--threads")
      o.threads = std::stoul(v);
    else if (a == "--inter-threads")
      o.inter_threads = std::stoul(v);
    else if (a == "--max-input-len")
      o.max_input_len = std::stoul(v);
    else if (a == "--max-positions")
      o.max_positions = std::stoul(v);
    else
      usage("unknown option " + a);
  }
  if (o.dir.empty()) usage("no model directory");
  if (o.beam < 1 || o.batch_size < 1 || o.threads < 1 || o.inter_threads < 1)
    usage("--beam, --batch-size, --threads and --inter-threads must be >= 1");
  return o;
}

// attn's limit on a sentence's tokens (</s> excluded), decode/search.cpp's max_target_len.
std::size_t max_tokens(const Options& o, std::size_t src_len, std::size_t positions) {
  const auto len = static_cast<long long>(o.max_len_a * static_cast<float>(src_len) + o.max_len_b);
  return static_cast<std::size_t>(std::clamp<long long>(len, 1, static_cast<long long>(positions) - 1));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::ifstream bpe_file(o.dir + "/attn_bpe.json");
  if (!bpe_file) usage(o.dir + "/attn_bpe.json is missing: export the model with attn export --to ctranslate2");
  const attn::text::Bpe bpe = attn::text::Bpe::from_json(nlohmann::json::parse(bpe_file));
  std::ifstream model_bin(o.dir + "/model.bin");
  if (!model_bin) usage(o.dir + "/model.bin is missing");

  ctranslate2::models::ModelLoader loader(o.dir);
  loader.device = ctranslate2::Device::CPU;
  loader.compute_type = ctranslate2::str_to_compute_type(o.compute_type);
  loader.num_replicas_per_device = o.inter_threads;
  ctranslate2::ReplicaPoolConfig pool;
  pool.num_threads_per_replica = o.threads;
  ctranslate2::Translator translator(loader, pool);

  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
  std::vector<std::vector<std::string>> sources(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    sources[i] = bpe.encode_pieces(lines[i]);
    if (sources[i].size() > o.max_input_len) sources[i].resize(o.max_input_len);
  }
  std::vector<std::size_t> order(lines.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() > sources[b].size(); });

  ctranslate2::TranslationOptions options;
  options.beam_size = static_cast<std::size_t>(o.beam);
  options.length_penalty = o.lenpen;
  options.return_end_token = true;
  options.min_decoding_length = 0;
  options.max_input_length = o.max_input_len;

  // Every batch is posted at once, with its own length limit; the replicas
  // take them as they come free.
  std::vector<std::vector<std::size_t>> batch_ids;
  std::vector<std::vector<std::future<ctranslate2::TranslationResult>>> pending;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < order.size();) {
    std::vector<std::size_t> ids;
    std::vector<std::vector<std::string>> batch;
    std::size_t limit = 1;
    for (; first < order.size() && batch.size() < o.batch_size; ++first) {
      if (sources[order[first]].empty()) continue;  // an empty line translates to an empty line
      ids.push_back(order[first]);
      batch.push_back(sources[order[first]]);
      limit = std::max(limit, max_tokens(o, batch.back().size(), o.max_positions));
    }
    if (batch.empty()) continue;
    options.max_decoding_length = limit + 1;  // the tokens and </s>
    pending.push_back(translator.translate_batch_async(batch, options));
    batch_ids.push_back(std::move(ids));
  }
  std::vector<std::string> outputs(lines.size());
  for (std::size_t b = 0; b < pending.size(); ++b)
    for (std::size_t k = 0; k < batch_ids[b].size(); ++k) {
      const ctranslate2::TranslationResult result = pending[b][k].get();
      std::vector<std::int32_t> tokens;
      for (const std::string& piece : result.output())
        if (piece != "</s>") tokens.push_back(bpe.vocab().id(piece));
      outputs[batch_ids[b][k]] = bpe.decode_line(tokens);
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string out;
  for (const std::string& line : outputs) out += line + '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fprintf(stderr, "ct2_translate: %zu sentences in %.3f s: %.1f sentences/s (%s, batch %zu, %zu × %zu threads)\n",
               lines.size(), seconds, seconds > 0 ? static_cast<double>(lines.size()) / seconds : 0.0,
               o.compute_type.c_str(), o.batch_size, o.inter_threads, o.threads);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
