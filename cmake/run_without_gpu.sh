#!/usr/bin/env bash
# Runs a GoogleTest program whole, for ctest on a machine where configure saw no GPU
# (GPULAB_GPU_SEEN false): one process for all of a cuda program's cases, where a GPU machine
# gives each case its own. The cases that need a device skip in it; the others (usage errors,
# the "no usable device" paths) run and can fail.
#
#   run_without_gpu.sh PROGRAM [ARGS...]
#
# Exit status: the program's when it failed; 77 (ctest's SKIP_RETURN_CODE) when it passed with
# no case run to the end (every case skipped), so ctest shows a skip, never a pass; 0 otherwise.
set -uo pipefail
(($# >= 1)) || { echo "run_without_gpu.sh: usage: run_without_gpu.sh PROGRAM [ARGS...]" >&2; exit 2; }
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if ((status != 0)); then
  exit "$status"
fi
if grep -q '^\[  PASSED  \] 0 tests' <<<"$output" && grep -q '^\[  SKIPPED \]' <<<"$output"; then
  exit 77
fi
exit 0
