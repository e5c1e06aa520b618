// The OpenMP thread pool: one setting for the whole process (--threads N).
#pragma once

namespace attn {

// Sets the number of OpenMP threads; n <= 0 means all cores OpenMP sees.
void set_threads(int n);
int num_threads();
int max_threads_available();

// The OpenMP threads of decoder i of `decoders` sharing `threads` (OpenMP's
// count is per thread, so each decoder sets its own): the first
// threads % decoders take one more, and each has at least one.
int threads_of_decoder(int threads, int decoders, int i);

// Unless the user chose how OpenMP threads wait (OMP_WAIT_POLICY or
// GOMP_SPINCOUNT), re-executes this program with GOMP_SPINCOUNT=10000: a thread
// that finds no work spins 10,000 iterations, not libgomp's default 300,000,
// before it sleeps. On a busy machine the spinning threads took the cores from
// the ones with work: translating 300 sentences on 2 threads beside another
// 2-thread job took 22.7 s with the default and 6.0 s with 10,000; alone, the
// run and training updates are as fast (docs/results/decoding-speed.md).
// libgomp reads these variables when it is loaded, before main, hence the
// re-execution. Returns only when it did not re-execute.
void bound_openmp_spinning(char** argv);

}  // namespace attn
