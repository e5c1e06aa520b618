#!/usr/bin/env bash
# Makes sure the Debian packages attn needs are installed.
#   ensure-deps.sh build   headers for building and testing (CLI11, nlohmann-json, zlib, cpp-httplib, Boost (Beast), Catch2 v2, OpenMP)
#   ensure-deps.sh bench   also OpenBLAS (linked into the benchmark only)
#   ensure-deps.sh twin    also python3-torch and numpy (the PyTorch twin in tools/)
#   ensure-deps.sh fuzz    clang with libFuzzer and LLVM's OpenMP (make fuzz)
#   ensure-deps.sh mpi     OpenMPI (make MPI=1, the [mpi] tests)
#   ensure-deps.sh test-extras  OpenMPI, Chromium, Firefox and clang-format 14: make test runs the [mpi]
#                               and browser tests and the format check (dev/format.sh --check)
# As root it installs what is missing; otherwise it prints the exact apt-get line and fails.
set -euo pipefail
what=${1:-build}

missing=()
need() { # package, file that proves it is installed
  [ -e "$2" ] || missing+=("$1")
}
need libcli11-dev /usr/include/CLI/CLI.hpp
need nlohmann-json3-dev /usr/include/nlohmann/json.hpp
need zlib1g-dev /usr/include/zlib.h
need libcpp-httplib-dev /usr/include/httplib.h
need catch2 /usr/include/catch2/catch.hpp
need libboost-dev /usr/include/boost/beast.hpp
command -v g++ >/dev/null || missing+=(g++)
if ! echo 'int main(){}' | g++ -fopenmp -x c++ - -o /dev/null 2>/dev/null; then missing+=(libgomp1); fi
if [ "$what" = bench ] || [ "$what" = twin ]; then
  need libopenblas-dev /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h
fi
if [ "$what" = fuzz ]; then
  command -v clang++ >/dev/null || missing+=(clang)
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || missing+=(libclang-rt-dev)
  ls /usr/lib/llvm-*/lib/clang/*/include/omp.h >/dev/null 2>&1 || missing+=(libomp-dev)
fi
if [ "$what" = mpi ] || [ "$what" = test-extras ]; then
  command -v mpicxx >/dev/null || missing+=(libopenmpi-dev)
  command -v mpirun >/dev/null || missing+=(openmpi-bin)
fi
if [ "$what" = test-extras ]; then
  command -v chromium >/dev/null || missing+=(chromium)
  command -v firefox-esr >/dev/null || missing+=(firefox-esr)
  # The format check takes clang-format 14 only (other versions lay out some code differently).
  command -v clang-format-14 >/dev/null || missing+=(clang-format-14)
fi
if [ "$what" = twin ]; then
  /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || missing+=(python3-torch python3-numpy)
fi

[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "attn: installing missing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "attn: missing Debian packages; install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
