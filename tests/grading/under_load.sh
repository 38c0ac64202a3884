#!/usr/bin/env bash
# Grades on sim do not depend on how busy the grading machine is: with four CPU-bound processes
# sharing the cores, `gpulab grade` gives the solutions full marks and the untouched stubs none
# (the graded tests run on the sim's modeled clock).
#   under_load.sh GPULAB_EXE SOURCE_DIR
set -euo pipefail
gpulab="$1"
source_dir="$2"
log="${TMPDIR:-/tmp}/under_load.$$.log"
busy=()
cleanup() {
  ((${#busy[@]} == 0)) || kill "${busy[@]}" 2>/dev/null || true
  rm -f "$log"
}
trap cleanup EXIT
for _ in 1 2 3 4; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
grade() {  # grade EXPECTED_TOTAL [ARGS...]
  local expected="$1"
  shift
  if ! "$gpulab" grade --backend sim --reseal -j2 "$@" >"$log" 2>&1; then
    echo "gpulab grade $* failed:"
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
grade 300/300 --submission "$source_dir/solutions"
grade 0/300
