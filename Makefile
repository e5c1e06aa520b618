# attn — build, test, benchmark, demo.
#   make            build ./attn (installs missing Debian packages when run as root)
#   make test       build and run the Catch2 suite (SANITIZE=1: with ASan + UBSan)
#   make test-unit  the fast loop: the suite without the cases that start processes ([e2e]) or are model-sized
#   make bench      speed against OpenBLAS (and the PyTorch twin, when installed); PARTS=list, PARTS=gemm,…
#   make demo       train a small model on data/, translate, score, dump attention maps
#   make fuzz       the libFuzzer targets in fuzz/, FUZZ_SECONDS each (clang)
#   make lowp-peak  this CPU's bf16 and int8 dot-product peaks against FP32 FMA

# One job per core unless -j is given (GNU make 4.3 reads -j from MAKEFLAGS).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(shell nproc)
endif

CXX      ?= g++
SANITIZE ?= 0
TEST_ARGS ?=
BUILD    := build
MAIN_OPT := -O3
OPT      := $(MAIN_OPT)
SAN_LDFLAGS :=
ifeq ($(SANITIZE),1)
  BUILD  := build-sanitize
  # -g1: line tables for the reports' file:line, without the full debug info
  # that made the build ~30% slower and the test binary 424 MB.
  # UBSan's null and alignment checks are left out: they doubled the compile
  # time of a source (e.g. 30.8 s -> 14.3 s for src/cli/translate.cpp) for
  # little: ASan itself reports a null dereference, x86 loads misaligned
  # scalars correctly, and the kernels' vector loads are unaligned ones.
  OPT    := -O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=null,alignment \
            -fno-sanitize-recover=undefined
  SAN_LDFLAGS := -fsanitize=address,undefined
endif
# The libFuzzer build (dev/fuzz.sh, make fuzz): clang, coverage, ASan + UBSan.
ifeq ($(FUZZ),1)
  CXX    := clang++
  BUILD  := build-fuzz
  OPT    := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
  SAN_LDFLAGS := -fsanitize=address,undefined
endif

# cpp-httplib (the HTTP client of the serve tests and bench_serve; attn serve
# itself is on Boost.Beast, header-only): Debian builds it as a library with
# these features, and its classes' layout depends on them (pkg-config cpp-httplib --cflags).
HTTPLIB_FLAGS := -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT -DCPPHTTPLIB_BROTLI_SUPPORT
COMMON_CXXFLAGS := -std=c++20 -fopenmp -Wall -Wextra -Wno-unknown-pragmas -Iinclude $(HTTPLIB_FLAGS) -MMD -MP
CXXFLAGS := $(COMMON_CXXFLAGS) $(OPT)
LDFLAGS  := -fopenmp $(SAN_LDFLAGS) -lz -lcpp-httplib -pthread

# Each per-ISA kernel source is compiled once for each ISA, into its own namespace.
ISA_FLAGS_0 :=
ISA_FLAGS_1 := -mavx2 -mfma -mf16c
ISA_FLAGS_2 := -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl -mprefer-vector-width=512
# The low-precision kernels (src/kernels/isa/lowp/) and the table of an ISA's kernels
# (src/kernels/isa/table.cpp) also for AVX512_VNNI, and with AVX512_BF16.
ISA_FLAGS_3 := $(ISA_FLAGS_2) -mavx512vnni
ISA_FLAGS_4 := $(ISA_FLAGS_3) -mavx512bf16

CORE_SRC   := $(filter-out src/cli/main.cpp,$(shell find src -name '*.cpp' -not -path 'src/kernels/isa/*' -not -path 'src/mpi/*'))
ISA_SRC    := $(filter-out src/kernels/isa/table.cpp,$(wildcard src/kernels/isa/*.cpp))
LOWP_SRC   := src/kernels/isa/table.cpp $(wildcard src/kernels/isa/lowp/*.cpp)
CLI_MAIN   := src/cli/main.cpp
TEST_SRC   := $(shell find tests -name '*.cpp' 2>/dev/null)

CORE_OBJ   := $(CORE_SRC:%.cpp=$(BUILD)/%.o)
ISA_OBJ    := $(foreach L,0 1 2,$(ISA_SRC:%.cpp=$(BUILD)/isa$(L)/%.o)) \
              $(foreach L,0 1 2 3 4,$(LOWP_SRC:%.cpp=$(BUILD)/isa$(L)/%.o))
LIB        := $(BUILD)/libattn.a
TEST_OBJ   := $(TEST_SRC:%.cpp=$(BUILD)/%.o)
# Under the sanitizers the tests' own code is the main build's: the library
# and the attn binary the tests run are instrumented, and a read past a buffer
# a test allocated is still caught (ASan guards every malloc). Instrumenting
# the test sources too was half of this build's time, for code that is not
# the product. (The link rule below puts the library first.)
ifeq ($(SANITIZE),1)
  TEST_OBJ := $(TEST_SRC:%.cpp=build/%.o)
endif
DEPS_OK    := $(BUILD)/.deps-ok

.PHONY: all test run-tests bench demo clean deps fuzz
all: attn

deps: $(DEPS_OK)
$(DEPS_OK): tools/ensure-deps.sh
	@bash tools/ensure-deps.sh build
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/%.o: %.cpp | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

define isa_rule
$(BUILD)/isa$(1)/%.o: %.cpp | $(DEPS_OK)
	@mkdir -p $$(dir $$@)
	$$(CXX) $$(CXXFLAGS) $$(ISA_FLAGS_$(1)) -DATTN_ISA_LEVEL=$(1) -c $$< -o $$@
endef
$(foreach L,0 1 2 3 4,$(eval $(call isa_rule,$(L))))

# Files built in with .incbin (include/attn/core/embed.h), which the compiler's
# dependency files do not list: the pages' files (src/web/), the attention
# and serve schemas' fixed parts, and each mechanism's drawing and extras' schema
# (src/nn/mechanisms/<name>/page.js, extras.schema.json).
$(BUILD)/src/web/assets.o: $(wildcard src/web/*.css src/web/*.js src/web/*.html)
$(BUILD)/src/decode/attention_schema.o: src/decode/attention_schema_base.json
$(BUILD)/src/serve/requests.o: src/serve/serve_schema_base.json
$(foreach f,$(wildcard src/nn/mechanisms/*/page.js src/nn/mechanisms/*/extras.schema.json),$(eval $(BUILD)/$(dir $(f))mechanism.o: $(f)))

$(LIB): $(CORE_OBJ) $(ISA_OBJ)
	@rm -f $@
	ar rcs $@ $^

# make MPI=1: ./attn is the MPI build (data-parallel under mpirun; docs/distributed.md).
MPI      ?= 0
MPICXX   ?= mpicxx
ATTN_BIN := $(BUILD)/attn$(if $(filter 1,$(MPI)),-mpi)
ifeq ($(SANITIZE),1)
attn: $(ATTN_BIN)
else
attn: $(ATTN_BIN)
	@cp $< $@
endif

$(BUILD)/attn: $(BUILD)/$(CLI_MAIN:.cpp=.o) $(LIB)
	$(CXX) $^ $(LDFLAGS) -o $@

# The MPI communicator is linked before libattn, so the archive's
# single-process one (src/train/communicator_single.cpp) is not pulled in.
$(BUILD)/mpi/%.o: src/mpi/%.cpp | $(DEPS_OK)
	@bash tools/ensure-deps.sh mpi
	@mkdir -p $(dir $@)
	$(MPICXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/attn-mpi: $(BUILD)/$(CLI_MAIN:.cpp=.o) $(BUILD)/mpi/communicator_mpi.o $(LIB)
	$(MPICXX) $^ $(LDFLAGS) -o $@

ifeq ($(SANITIZE),1)
build/tests/%.o: tests/%.cpp | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CXX) $(COMMON_CXXFLAGS) $(MAIN_OPT) -c $< -o $@
endif
# The library whole and first: under the sanitizers its instrumented copy of
# an inline function is the one kept (the tests use every member anyway).
$(BUILD)/attn_tests: $(TEST_OBJ) $(LIB)
	$(CXX) -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(TEST_OBJ) $(LDFLAGS) -o $@

# The suite runs the CLI too, so it needs the binary of the same build; and,
# when MPI is installed (not under the sanitizers), the MPI build for [mpi].
MPI_TEST_BIN := $(if $(and $(shell command -v $(MPICXX) 2>/dev/null),$(filter 0,$(SANITIZE))),$(BUILD)/attn-mpi)
# First the packages of the tests that would otherwise skip (Chromium, OpenMPI,
# clang-format 14), when they can be installed; then a fresh make sees mpicxx.
test:
	@bash tools/ensure-deps.sh test-extras || echo "attn: the browser, [mpi] and format tests will be skipped"
	@$(MAKE) --no-print-directory run-tests
# TEST_JOBS test files run at once, each in its own process (tools/run-tests.sh).
TEST_JOBS ?= $(shell nproc)
run-tests: $(BUILD)/attn_tests $(BUILD)/attn $(MPI_TEST_BIN)
	@ATTN_BIN=$(BUILD)/attn ATTN_MPI_BIN=$(MPI_TEST_BIN) ATTN_TEST_JOBS=$(TEST_JOBS) \
	  bash tools/run-tests.sh $(BUILD)/attn_tests $(TEST_ARGS)

# The fast loop: every test case that starts no process (no attn binary, server,
# script or browser: those are tagged [e2e]) and is not model-sized ([big]).
.PHONY: test-unit
test-unit: $(BUILD)/attn_tests
	@ATTN_TEST_JOBS=$(TEST_JOBS) bash tools/run-tests.sh $(BUILD)/attn_tests '~[e2e]~[big]' $(TEST_ARGS)

# Benchmarks: OpenBLAS is linked into the benchmark program only.
BENCH_FLAGS := -I/usr/include/x86_64-linux-gnu/openblas-pthread
$(BUILD)/bench_gemm: bench/bench_gemm.cpp $(LIB)
	@bash tools/ensure-deps.sh bench
	$(CXX) $(CXXFLAGS) $(BENCH_FLAGS) $< $(LIB) $(LDFLAGS) -lopenblas -o $@

# Mechanism micro-benchmarks: libattn only, yardstick attn's own global attention.
$(BUILD)/bench_%: bench/bench_%.cpp $(LIB)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) -o $@

# make bench runs bench/bench.sh's default parts: the C++ benchmarks above, then attn against the
# PyTorch twin on Multi30k (hours at full size on 2 vCPUs, sizes in bench/twin_bench.sh), the speed
# of every arch and attn serve under load, when the corpus is in M30K. PARTS=gemm,band runs only
# those; PARTS=list lists every part. The twin's results go to BENCH_OUT: run `make bench` again
# after an interruption and it resumes there.
M30K ?= data/multi30k
BENCH_OUT ?= runs/bench/make-bench
PARTS ?= default
bench:
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) M30K=$(M30K) BENCH_OUT=$(BENCH_OUT) MAKE="$(MAKE)" bash bench/bench.sh $(PARTS)

demo: attn
	@bash tools/demo.sh

# The peak of the bf16 and int8 dot-product instructions against FP32 FMA on this CPU (docs/guide.md,
# lower precision): the ceiling the low-precision kernels are measured against.
.PHONY: lowp-peak
$(BUILD)/lowp_peak: bench/lowp_peak.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -mavx512f -mavx512bf16 -mavx512vnni $< -o $@
lowp-peak: $(BUILD)/lowp_peak
	@if grep -q avx512_bf16 /proc/cpuinfo && grep -q avx512_vnni /proc/cpuinfo; then $(BUILD)/lowp_peak; \
	else echo "lowp-peak: this CPU lacks AVX512_BF16 or AVX512_VNNI; nothing to measure"; fi

# libFuzzer targets (make FUZZ=1 build-fuzz/fuzz_<name>); `make fuzz` runs each
# for FUZZ_SECONDS from the seeds in fuzz/seeds/ (dev/fuzz.sh).
FUZZ_SECONDS ?= 60
$(BUILD)/fuzz_%: fuzz/fuzz_%.cpp fuzz/fuzz_support.h $(LIB)
	$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $< $(LIB) $(LDFLAGS) -fsanitize=fuzzer -o $@

fuzz:
	@bash dev/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-sanitize build-fuzz attn

-include $(CORE_OBJ:.o=.d) $(ISA_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/$(CLI_MAIN:.cpp=.d) $(BUILD)/mpi/communicator_mpi.d

# ---- PyTorch twin cross-check (owner: bench/twin; run by hand, not by `make test`) ----
#   make twin-check    attn vs the PyTorch twin: log-probs, loss and gradients on fixed batches
# Debian's python3-torch is installed for the system interpreter, not for a pyenv/venv python3.
PYTHON ?= /usr/bin/python3

$(BUILD)/twin_dump: $(BUILD)/bench/twin/twin_dump.o $(LIB)
	$(CXX) $^ $(LDFLAGS) -o $@

.PHONY: twin-check
twin-check: $(BUILD)/twin_dump
	@$(PYTHON) -c 'import torch, numpy' 2>/dev/null || bash tools/ensure-deps.sh twin
	$(PYTHON) bench/twin/crosscheck.py --twin-dump $(BUILD)/twin_dump --work-dir $(BUILD)/twin-check

-include $(BUILD)/bench/twin/twin_dump.d
# The benchmarks' own headers (bench_util.h, length_*.h, hostile_load.h): -MMD wrote their lists.
-include $(wildcard $(BUILD)/bench_*.d)
# ---- end of the PyTorch twin block ----

# Training-step benchmark of the reference model (no yardstick linked).
$(BUILD)/bench_step: bench/bench_step.cpp $(LIB)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) -o $@
