#!/usr/bin/env bash
# Grades on sim do not depend on how busy the grading machine is: with four CPU-bound processes
# sharing the cores while the graded tests run, `gpulab grade` gives the solutions of the timing
# labs full marks and their untouched stubs none (the graded tests run on the sim's modeled
# clock). The load starts when the grader says it runs the graded tests: the build before them is
# only slower under load.
#   under_load.sh GPULAB_EXE SOURCE_DIR
set -euo pipefail
gpulab="$1"
source_dir="$2"
log="${TMPDIR:-/tmp}/under_load.$$.log"
busy=()
stop_load() {
  ((${#busy[@]} == 0)) || kill "${busy[@]}" 2>/dev/null || true
  busy=()
}
cleanup() {
  stop_load
  rm -f "$log" "$log.seal"
}
trap cleanup EXIT
grade() {  # grade EXPECTED_TOTAL [ARGS...]
  local expected="$1"
  shift
  "$gpulab" grade --backend sim --reseal --seal "$log.seal" -j2 "$@" >"$log" 2>&1 &
  local grader=$!
  until grep -Eq "running [0-9]+ graded tests" "$log" 2>/dev/null || ! kill -0 "$grader" 2>/dev/null; do
    sleep 0.1
  done
  if kill -0 "$grader" 2>/dev/null; then
    for _ in 1 2 3 4; do
      sh -c 'while :; do :; done' &
      busy+=($!)
    done
  fi
  local status=0
  wait "$grader" || status=$?
  local loaded=${#busy[@]}
  stop_load
  if ((status != 0)); then
    echo "gpulab grade $* failed:"
    tail -40 "$log"
    exit 1
  fi
  if ((loaded == 0)); then
    echo "gpulab grade $* finished before its tests could be put under load:"
    tail -40 "$log"
    exit 1
  fi
  if ! grep -Eq "^total +${expected}\$" "$log"; then
    echo "gpulab grade $* under load: expected total ${expected}, got:"
    grep -E '^(lab[0-9]+ |total|Lab)' "$log" | head -60
    exit 1
  fi
  grep -E '^total' "$log"
}
# The labs whose tests time kernels (lab 03 computes from given numbers: load cannot change it).
grade 200/200 lab01 lab02 --submission "$source_dir/solutions"
grade 0/200 lab01 lab02
