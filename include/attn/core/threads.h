// The OpenMP thread pool: one setting for the whole process (--threads N).
#pragma once

namespace attn {

// Sets the number of OpenMP threads; n <= 0 means all cores OpenMP sees.
void set_threads(int n);
int num_threads();
int max_threads_available();

}  // namespace attn
