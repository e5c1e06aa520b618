#!/usr/bin/env bash
# Builds CTranslate2 (CPU only) from git snapshots into build-ct2/ (git-ignored), with Debian's
# oneDNN and OpenBLAS (its OpenMP build), then bench/ct2_translate.cpp against it and against libattn
# (for attn's BPE). With both, CTranslate2 multiplies FP32 and int8 with oneDNN (its backend order:
# MKL, oneDNN, OpenBLAS; Debian main has no MKL). Nothing of CTranslate2 is committed to this repository.
#
#   bench/ctranslate2_build.sh CT2_GIT SPDLOG_GIT CPU_FEATURES_GIT
#
# Each argument is a git directory (a clone, or a bare repository) of
# github.com/OpenNMT/CTranslate2, github.com/gabime/spdlog and github.com/google/cpu_features;
# they may also come from the environment (CT2_GIT, SPDLOG_GIT, CPU_FEATURES_GIT). CTranslate2 is
# taken at CT2_REF (default HEAD), spdlog and cpu_features at the commits CTranslate2 pins as its
# submodules. A second run reuses the build (make only rebuilds what changed).
#
# Debian 12 ships oneDNN 2.6.3; CTranslate2's Conv1D has a oneDNN path that needs oneDNN 3's API.
# That operator serves only speech models and has a plain fallback, so the copy of
# src/ops/conv1d_cpu.cc in build-ct2/ is built without its oneDNN path (patched at build time).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${CT2_BUILD_DIR:-$here/build-ct2}
ct2_git=${1:-${CT2_GIT:-}}
spdlog_git=${2:-${SPDLOG_GIT:-}}
cpu_features_git=${3:-${CPU_FEATURES_GIT:-}}
ct2_ref=${CT2_REF:-HEAD}
jobs=${JOBS:-$(nproc)}

usage() {
  echo "usage: bench/ctranslate2_build.sh CT2_GIT SPDLOG_GIT CPU_FEATURES_GIT" >&2
  echo "  (git directories of OpenNMT/CTranslate2, gabime/spdlog and google/cpu_features;" >&2
  echo "   e.g. git clone --bare https://github.com/OpenNMT/CTranslate2 ct2.git; see bench/README.md)" >&2
  exit 2
}
for dir in "$ct2_git" "$spdlog_git" "$cpu_features_git"; do
  [ -n "$dir" ] || usage
  git -C "$dir" rev-parse --git-dir >/dev/null 2>&1 || {
    echo "ctranslate2_build: $dir is not a git directory" >&2
    usage
  }
done

# Debian packages: cmake, oneDNN, OpenBLAS.
missing=()
command -v cmake >/dev/null || missing+=(cmake)
[ -e /usr/include/dnnl.hpp ] || missing+=(libdnnl-dev)
[ -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ] || missing+=(libopenblas-dev)
[ -e /usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0 ] || missing+=(libopenblas0-openmp)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "ctranslate2_build: install first: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

ct2_commit=$(git -C "$ct2_git" rev-parse "$ct2_ref^{commit}")
pinned() { git -C "$ct2_git" ls-tree "$ct2_commit" "third_party/$1" | awk '{print $3}'; }
spdlog_commit=$(pinned spdlog)
cpu_features_commit=$(pinned cpu_features)
for pair in "$spdlog_git:$spdlog_commit" "$cpu_features_git:$cpu_features_commit"; do
  git -C "${pair%%:*}" cat-file -e "${pair##*:}^{commit}" 2>/dev/null || {
    echo "ctranslate2_build: ${pair%%:*} lacks commit ${pair##*:} (pinned by CTranslate2 $ct2_commit); fetch it" >&2
    exit 1
  }
done

# The sources, unpacked afresh when the commit changed.
src=$out/src
stamp="$ct2_commit $spdlog_commit $cpu_features_commit"
if [ ! -f "$src/.attn-stamp" ] || [ "$(cat "$src/.attn-stamp")" != "$stamp" ]; then
  rm -rf "$src"
  mkdir -p "$src/third_party/spdlog" "$src/third_party/cpu_features"
  git -C "$ct2_git" archive "$ct2_commit" | tar -x -C "$src"
  git -C "$spdlog_git" archive "$spdlog_commit" | tar -x -C "$src/third_party/spdlog"
  git -C "$cpu_features_git" archive "$cpu_features_commit" | tar -x -C "$src/third_party/cpu_features"
  # Conv1D without its oneDNN 3 path (see above): its first '#ifdef CT2_WITH_DNNL' becomes '#if 0'.
  conv=$src/src/ops/conv1d_cpu.cc
  grep -q '^#ifdef CT2_WITH_DNNL' "$conv" || {
    echo "ctranslate2_build: $conv changed; check its oneDNN path before building" >&2
    exit 1
  }
  sed -i '0,/^#ifdef CT2_WITH_DNNL/s//#if 0  \/\/ attn build: Debian'"'"'s oneDNN 2.x lacks the API of this path/' "$conv"
  echo "$stamp" >"$src/.attn-stamp"
fi

# OpenBLAS's OpenMP build, so that its threads are CTranslate2's OpenMP threads (as MKL's are in
# CTranslate2's own builds): with the default pthread build, OpenBLAS's pool and CTranslate2's
# OpenMP pool spin against each other (FP32 at 2 threads ran ~20x slower than at 1 on a loaded
# 2-core host). The headers are the same for both builds; the run path picks the OpenMP library
# at run time (the system-wide libopenblas.so.0 stays Debian's choice).
blas_inc=/usr/include/x86_64-linux-gnu/openblas-pthread
blas_dir=/usr/lib/x86_64-linux-gnu/openblas-openmp
blas_lib=$blas_dir/libopenblas.so.0
cmake -S "$src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$out/install" -DCMAKE_INSTALL_RPATH="$blas_dir" -DCMAKE_BUILD_RPATH="$blas_dir" \
  -DWITH_MKL=OFF -DWITH_DNNL=ON -DWITH_OPENBLAS=ON -DWITH_RUY=OFF -DBUILD_CLI=OFF \
  -DOPENMP_RUNTIME=COMP -DOPENBLAS_INCLUDE_DIR="$blas_inc" -DOPENBLAS_LIBRARY="$blas_lib" >"$out/cmake.log" 2>&1 || {
  tail -30 "$out/cmake.log" >&2
  exit 1
}
nice cmake --build "$out/build" -j "$jobs" >"$out/build.log" 2>&1 || {
  tail -30 "$out/build.log" >&2
  exit 1
}
cmake --install "$out/build" >/dev/null

# Our driver: CTranslate2's Translator on text, tokenized by attn's BPE.
make -C "$here" --no-print-directory CXX="${CXX:-g++}" build/libattn.a >/dev/null
${CXX:-g++} -std=c++20 -O2 -fopenmp -I"$here/include" -I"$out/install/include" "$here/bench/ct2_translate.cpp" \
  "$here/build/libattn.a" -L"$out/install/lib" -Wl,-rpath,"$out/install/lib" -lctranslate2 -lz -pthread \
  -o "$out/ct2_translate"

dnnl_version=$(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo '?')
blas_version=$(dpkg-query -W -f='${Version}' libopenblas0-openmp 2>/dev/null || echo '?')
ct2_version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$src/python/ctranslate2/version.py")
{
  echo "CTranslate2 $ct2_version (commit $ct2_commit), spdlog $spdlog_commit, cpu_features $cpu_features_commit"
  echo "backends: oneDNN $dnnl_version (FP32 sgemm and int8 GEMM: CTranslate2 takes oneDNN before OpenBLAS when both are built), OpenBLAS $blas_version, OpenMP build (linked, not its GEMM); OpenMP: GCC's; no MKL, no Ruy"
  echo "patched in the build copy: src/ops/conv1d_cpu.cc without its oneDNN path (speech models only)"
  echo "compiler: $(${CXX:-g++} --version | head -1)"
  echo "library: $out/install/lib/libctranslate2.so; driver: $out/ct2_translate"
} | tee "$out/BUILT_WITH"
