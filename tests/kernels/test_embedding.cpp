// Embedding gather and scatter-add against references and finite
// differences; the scatter is bitwise independent of the thread count.
#include <cstring>
#include <vector>

#include "../support.h"
#include "attn/kernels/embedding.h"

using namespace attn;
using namespace attn::kernels;

namespace {

// ids in [0, vocab), with many repeats when tokens > vocab.
std::vector<std::int32_t> random_ids(std::int64_t tokens, std::int64_t vocab, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocab)));
  return ids;
}

struct Case {
  std::int64_t vocab, tokens, d;
};
const std::vector<Case> kCases = {{1, 1, 1},      {2, 7, 2},     {5, 17, 7},        {9, 63, 17},  {13, 65, 64},
                                  {100, 129, 65}, {50, 40, 129}, {8000, 4096, 256}, {3, 300, 256}};

}  // namespace

TEST_CASE("embedding_gather copies scaled rows", "[kernels][embedding]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Case& c : kCases) {
      INFO("vocab " << c.vocab << ", tokens " << c.tokens << ", d " << c.d);
      const auto table = test::random_vector(static_cast<std::size_t>(c.vocab * c.d), c.d);
      const auto ids = random_ids(c.tokens, c.vocab, c.tokens);
      const float scale = 16.0f;
      std::vector<float> out(static_cast<std::size_t>(c.tokens * c.d), -1.0f);
      embedding_gather(table.data(), ids.data(), out.data(), c.tokens, c.d, scale);
      std::vector<double> want(out.size());
      for (std::int64_t t = 0; t < c.tokens; ++t)
        for (std::int64_t j = 0; j < c.d; ++j) want[t * c.d + j] = static_cast<double>(scale) * table[ids[t] * c.d + j];
      test::require_close(out, want, 1e-30, 0.0);  // exact: the scale is a power of two
    }
  });
}

TEST_CASE("embedding_scatter_add is the gradient of the gather, accumulated in token order", "[kernels][embedding]") {
  test::for_each_isa_and_threads([](Isa, int) {
    for (const Case& c : kCases) {
      INFO("vocab " << c.vocab << ", tokens " << c.tokens << ", d " << c.d);
      const std::size_t table_size = static_cast<std::size_t>(c.vocab * c.d);
      const auto ids = random_ids(c.tokens, c.vocab, 2 * c.tokens + 1);
      const auto dout = test::random_vector(static_cast<std::size_t>(c.tokens * c.d), 3 * c.d);
      const auto start = test::random_vector(table_size, 4 * c.d);
      const float scale = 0.7f;
      std::vector<float> dtable = start;
      embedding_scatter_add(dout.data(), ids.data(), dtable.data(), c.tokens, c.d, scale);
      std::vector<double> want(start.begin(), start.end());
      for (std::int64_t t = 0; t < c.tokens; ++t)
        for (std::int64_t j = 0; j < c.d; ++j) want[ids[t] * c.d + j] += static_cast<double>(scale) * dout[t * c.d + j];
      test::require_close(dtable, want, 1e-5, 1e-5);
    }
    // Finite differences of L = Σ w ⊙ gather(table) on a small case.
    const std::int64_t vocab = 4, tokens = 9, d = 5;
    const auto table = test::random_vector(vocab * d, 1);
    const auto ids = random_ids(tokens, vocab, 2);
    const auto w = test::random_vector(tokens * d, 3);
    const float scale = 1.5f;
    std::vector<float> dtable(vocab * d, 0.0f);
    embedding_scatter_add(w.data(), ids.data(), dtable.data(), tokens, d, scale);
    std::vector<double> td(table.begin(), table.end());
    auto loss = [&] {
      double total = 0.0;
      for (std::int64_t t = 0; t < tokens; ++t)
        for (std::int64_t j = 0; j < d; ++j) total += w[t * d + j] * scale * td[ids[t] * d + j];
      return total;
    };
    std::vector<double> numeric(td.size());
    for (std::size_t i = 0; i < td.size(); ++i) numeric[i] = test::central_difference(loss, td[i]);
    test::require_close(dtable, numeric, 1e-6, 1e-5);
  });
}

TEST_CASE("embedding_scatter_add is bitwise identical for 1 and 2 threads", "[kernels][embedding]") {
  const std::int64_t vocab = 37, tokens = 4096, d = 256;  // many repeats of each id
  const auto ids = random_ids(tokens, vocab, 5);
  const auto dout = test::random_vector(static_cast<std::size_t>(tokens * d), 6);
  const Isa saved_isa = active_isa();
  const int saved_threads = num_threads();
  for (Isa isa : test::supported_isas()) {
    set_active_isa(isa);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 2}) {
      set_threads(threads);
      std::vector<float> dtable(static_cast<std::size_t>(vocab * d), 0.0f);
      embedding_scatter_add(dout.data(), ids.data(), dtable.data(), tokens, d, 1.0f);
      results.push_back(dtable);
    }
    INFO("isa " << isa_name(isa));
    REQUIRE(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) == 0);
    REQUIRE(std::memcmp(results[1].data(), results[2].data(), results[0].size() * sizeof(float)) == 0);
  }
  set_active_isa(saved_isa);
  set_threads(saved_threads);
}
