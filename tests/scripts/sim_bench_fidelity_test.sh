#!/usr/bin/env bash
# gpulab-sim-bench --fidelity on small made-up measurements: the table, the summary and the ladder
# line for a vector_add "measured on a GPU"; exit 2 for a file measured on sim, for files of two
# GPUs, for an op the catalog lacks and for a size that is not a whole number (a word, a negative
# number). Exit 77 (skipped) where the build cannot count.
#
#   sim_bench_fidelity_test.sh PATH/TO/gpulab-sim-bench
set -uo pipefail
bench="$1"
work=$(mktemp -d -t gpulab-fidelity.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

# results FILE BACKEND SPEC OP: one kernel_bench result, level 1 at 65536, "measured" 0.01 ms.
results() {
  local clock=gpu
  [[ "$2" == sim ]] && clock=modeled
  cat > "$1" <<JSON
{"context": {"backend": "$2", "clock": "$clock", "date": "2026-11-29T00:00:00Z", "device": "test",
 "git_revision": "", "gpulab_version": "0.1.0", "schema_version": 2, "spec": "$3"},
 "results": [{"name": "kernel_bench",
   "params": {"block_size": "256", "level": "1", "level_name": "x", "op": "$4", "size": "65536"},
   "metrics": [{"name": "time_ms", "provenance": "measured", "value": 0.01}]}]}
JSON
}

results "$work/gpu.json" cuda "H200 SXM" vector_add
text=$("$bench" --fidelity "$work/gpu.json" 2>&1); code=$?
if [[ "$text" == *"memory counting is not available"* ]]; then
  echo "skipped: this build cannot count (the modeled clock needs counting)"
  exit 77
fi
expect "a GPU's vector_add" 0 $code "modeled / measured" "$text"
expect "the summary" 0 $code "mean absolute error |modeled / measured - 1|" "$text"
expect "the ladder" 0 $code "vector_add 65536: the measured order kept" "$text"
expect "the clock" 0 $code "modeled clock (H200 SXM)" "$text"

results "$work/sim.json" sim "H200 SXM" vector_add
text=$("$bench" --fidelity "$work/sim.json" 2>&1)
expect "a file measured on sim" 2 $? "was not measured on a GPU" "$text"

results "$work/h100.json" cuda "H100 SXM" vector_add
text=$("$bench" --fidelity "$work/gpu.json" "$work/h100.json" 2>&1)
expect "two GPUs" 2 $? "measured on different GPUs" "$text"

results "$work/unknown.json" cuda "H200 SXM" no_such_op
text=$("$bench" --fidelity "$work/unknown.json" 2>&1)
expect "an op the catalog lacks" 2 $? "the catalog has no op \"no_such_op\"" "$text"

sed 's/"size": "65536"/"size": "64k"/' "$work/gpu.json" > "$work/bad-size.json"
text=$("$bench" --fidelity "$work/bad-size.json" 2>&1)
expect "a size that is not a number" 2 $? "parameter size is \"64k\", not a whole number" "$text"

sed 's/"size": "65536"/"size": "-1"/' "$work/gpu.json" > "$work/negative-size.json"
text=$("$bench" --fidelity "$work/negative-size.json" 2>&1)
expect "a negative size" 2 $? "parameter size is \"-1\", not a whole number" "$text"

text=$("$bench" --fidelity "$work/unknown.json" --skip no_such_op 2>&1)
expect "every op skipped" 2 $? "no \`gpulab bench\` times measured on a GPU" "$text"

finish
