#include "attn/core/threads.h"

#include <omp.h>

namespace attn {

void set_threads(int n) { omp_set_num_threads(n > 0 ? n : omp_get_num_procs()); }
int num_threads() { return omp_get_max_threads(); }
int max_threads_available() { return omp_get_num_procs(); }

}  // namespace attn
