#!/usr/bin/env bash
# The solution's timing tests of lab 01 on sim, graded with the modeled clock (as ctest grades
# them), pass on a machine kept busy by four CPU-bound processes, three times in a row: a grade on
# sim does not depend on how busy the grading machine is.
#   under_load.sh GRADED_TEST_BINARY
set -euo pipefail
binary="$1"
busy=()
cleanup() { ((${#busy[@]} == 0)) || kill "${busy[@]}" 2>/dev/null || true; }
trap cleanup EXIT
for _ in 1 2 3 4; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
for run in 1 2 3; do
  if ! GPULAB_SIM_CLOCK=modeled "$binary" --gtest_filter='Lab01Timing.*' >"${TMPDIR:-/tmp}/under_load.$$.log" 2>&1; then
    echo "run $run under load failed:"
    tail -40 "${TMPDIR:-/tmp}/under_load.$$.log"
    rm -f "${TMPDIR:-/tmp}/under_load.$$.log"
    exit 1
  fi
  grep -E '^\[  PASSED  \]' "${TMPDIR:-/tmp}/under_load.$$.log"
done
rm -f "${TMPDIR:-/tmp}/under_load.$$.log"
