// attn bounds how long idle OpenMP threads spin (GOMP_SPINCOUNT=10000) unless
// the user chose OpenMP's waiting; libgomp shows what it read with
// OMP_DISPLAY_ENV=verbose, once per process image.
#include <string>

#include "../support.h"
#include "run_attn.h"

using namespace attn::test;

namespace {

// The GOMP_SPINCOUNT values libgomp showed, in order, joined by spaces.
std::string spin_counts(const std::string& err) {
  std::string shown;
  const std::string key = "GOMP_SPINCOUNT = '";
  for (std::size_t at = err.find(key); at != std::string::npos; at = err.find(key, at + 1)) {
    const std::size_t from = at + key.size();
    if (!shown.empty()) shown += ' ';
    shown += err.substr(from, err.find('\'', from) - from);
  }
  return shown;
}

}  // namespace

TEST_CASE("attn re-executes itself with GOMP_SPINCOUNT=10000 unless OpenMP's waiting was chosen", "[cli][e2e]") {
  const std::string clean = "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose ";
  RunResult r = run_attn("--version", "", clean);
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.out.rfind("attn ", 0) == 0);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 1);  // printed by the second image only
  const std::string shown = spin_counts(r.err);                // libgomp's default (300000), then ours
  REQUIRE(std::count(shown.begin(), shown.end(), ' ') == 1);
  REQUIRE(shown.substr(shown.find(' ') + 1) == "10000");

  r = run_attn("--version", "", clean + "GOMP_SPINCOUNT=123 ");
  REQUIRE(r.status == 0);
  REQUIRE(spin_counts(r.err) == "123");

  r = run_attn("--version", "", clean + "OMP_WAIT_POLICY=active ");
  REQUIRE(r.status == 0);
  REQUIRE(spin_counts(r.err).find("10000") == std::string::npos);
  REQUIRE(r.err.find("OMP_WAIT_POLICY = 'ACTIVE'") != std::string::npos);
}
