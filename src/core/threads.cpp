#include "attn/core/threads.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace attn {

void set_threads(int n) { omp_set_num_threads(n > 0 ? n : omp_get_num_procs()); }
int num_threads() { return omp_get_max_threads(); }
int max_threads_available() { return omp_get_num_procs(); }

int threads_of_decoder(int threads, int decoders, int i) {
  return std::max(1, threads / decoders + (i < threads % decoders ? 1 : 0));
}

void bound_openmp_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", "10000", 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): run on with libgomp's default waiting.
}

}  // namespace attn
