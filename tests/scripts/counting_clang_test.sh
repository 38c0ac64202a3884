#!/usr/bin/env bash
# The sim's counting suite (tests/sim/counting_test.cu, its hand-worked cases) built with clang and
# its LLVM plugin, in a build folder of its own beside this one: the default suite runs it built
# with GCC. Skipped (77) without a clang whose LLVM headers are installed.
#
#   counting_clang_test.sh SOURCE_DIR WORK_DIR CLANGXX
set -euo pipefail
source_dir="$1"
work="$2"
clangxx="$3"
major="$("$clangxx" -dumpversion | cut -d. -f1)"
if [[ ! -f "/usr/lib/llvm-$major/include/llvm/Passes/PassPlugin.h" ]]; then
  echo "SKIPPED: no headers of clang $major's LLVM (llvm-$major-dev)"
  exit 77
fi
cmake -S "$source_dir" -B "$work" -G Ninja -DCMAKE_CXX_COMPILER="$clangxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPULAB_ENABLE_CUDA=OFF -DGPULAB_BUILD_VIEWER=OFF \
  -DGPULAB_WERROR=ON > "$work.configure.log" 2>&1 || { cat "$work.configure.log"; exit 1; }
if grep "sim counting off" "$work.configure.log"; then
  exit 1
fi
cmake --build "$work" --target gpulab.test.sim_counting.sim > "$work.build.log" 2>&1 || {
  tail -50 "$work.build.log"
  exit 1
}
"$work/bin/gpulab.test.sim_counting.sim"
