#!/usr/bin/env bash
# gpulab-sim-bench --fidelity on small made-up measurements: the table, the summary and the ladder
# line for a vector_add "measured on a GPU"; a run per GPU and the summary over both for files of
# two GPUs; levels not compared, and named, when their op is gone, their problem changed or the
# corpus marks them stale; exit 2 for a file measured on sim, a time without its problem and a
# size that is not a whole number (a word, a negative number); bounds on the summary (--max-error,
# --max-ratio, --require-order) kept or broken (exit 1). --add-to-corpus makes a corpus the
# same run reads, and a new time of the same kernel replaces the old one. Exit 77 (skipped) where
# the build cannot count.
#
#   fidelity_test.sh PATH/TO/gpulab-sim-bench
set -uo pipefail
bench="$1"
work=$(mktemp -d -t gpulab-fidelity.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../../scripts/expect.sh
source "$(dirname "$0")/../../scripts/expect.sh"

# results FILE BACKEND SPEC OP [PROBLEM]: one kernel_bench result, level 1 at 65536, "measured"
# 0.01 ms, on the problem named (vector_add's at that size by default; "none": no problem).
results() {
  local clock=gpu problem=", \"problem\": \"${5:-65536 floats per vector}\""
  [[ "$2" == sim ]] && clock=modeled
  [[ "${5:-}" == none ]] && problem=""
  cat > "$1" <<JSON
{"context": {"backend": "$2", "clock": "$clock", "date": "2026-11-29T00:00:00Z", "device": "test",
 "git_revision": "abc", "gpulab_version": "0.1.0", "schema_version": 2, "spec": "$3"},
 "results": [{"name": "kernel_bench",
   "params": {"block_size": "256", "level": "1", "level_name": "x", "op": "$4",
              "size": "65536"$problem},
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
expect "the ladder" 0 $code "vector_add 65536, 256 threads a block: the measured order kept" "$text"
expect "the clock" 0 $code "modeled clock (H200 SXM)" "$text"

results "$work/sim.json" sim "H200 SXM" vector_add
text=$("$bench" --fidelity "$work/sim.json" 2>&1)
expect "a file measured on sim" 2 $? "was not measured on a GPU" "$text"

results "$work/h100.json" cuda "H100 SXM" vector_add
text=$("$bench" --fidelity "$work/gpu.json" "$work/h100.json" 2>&1); code=$?
expect "two GPUs: one run each" 0 $code "modeled clock (H100 SXM)" "$text"
expect "two GPUs: the summary over both" 0 $code "over 2 kernels" "$text"
expect "two GPUs: each GPU's ladder" 0 $code "H100 SXM vector_add 65536, 256 threads a block: the measured order kept" "$text"

results "$work/unknown.json" cuda "H200 SXM" no_such_op
text=$("$bench" --fidelity "$work/unknown.json" 2>&1)
expect "an op the catalog lacks is named" 0 $? "the catalog has no op \"no_such_op\" any more" "$text"

results "$work/changed.json" cuda "H200 SXM" vector_add "1 floats per vector"
text=$("$bench" --fidelity "$work/changed.json" "$work/gpu.json" 2>&1); code=$?
expect "a changed problem is named" 0 $code "the problem changed: measured on \"1 floats per vector\"" "$text"
expect "and not compared" 0 $code "over 1 kernels" "$text"

results "$work/old.json" cuda "H200 SXM" vector_add none
text=$("$bench" --fidelity "$work/old.json" 2>&1)
expect "a time without its problem" 2 $? "has no parameter \"problem\"" "$text"

sed 's/"size": "65536"/"size": "64k"/' "$work/gpu.json" > "$work/bad-size.json"
text=$("$bench" --fidelity "$work/bad-size.json" 2>&1)
expect "a size that is not a number" 2 $? "size is \"64k\", not a whole number" "$text"

sed 's/"size": "65536"/"size": "-1"/' "$work/gpu.json" > "$work/negative-size.json"
text=$("$bench" --fidelity "$work/negative-size.json" 2>&1)
expect "a negative size" 2 $? "size is \"-1\", not a whole number" "$text"

text=$("$bench" --fidelity "$work/unknown.json" --skip no_such_op 2>&1)
expect "every op skipped" 2 $? "no \`gpulab bench\` times measured on a GPU" "$text"

# Bounds on the summary: kept, broken (exit 1), checked once over two GPUs, and a ladder whose
# measured order the model cannot keep (the copy "measured" 1000x slower than the naive transpose).
text=$("$bench" --fidelity "$work/gpu.json" --max-error 100000 --max-ratio 1000 --require-order 2>&1)
code=$?
expect "bounds kept" 0 $code "bound: no kernel off by more than 1000.00x: kept" "$text"
expect "the order kept" 0 $code "bound: every ladder in its measured order: kept" "$text"
text=$("$bench" --fidelity "$work/gpu.json" --max-error 0 2>&1)
expect "a bound broken" 1 $? "bound: mean absolute error at most 0%: BROKEN" "$text"
text=$("$bench" --fidelity "$work/gpu.json" "$work/h100.json" --max-error 0 2>&1); code=$?
expect "two GPUs: the bound over both" 1 $code "== every GPU ==" "$text"
checks=$(grep -c "bound: mean absolute error" <<< "$text")
expect "two GPUs: checked once, not per GPU" 1 $code "checks: 1" "checks: $checks"
cat > "$work/ladder.json" <<JSON
{"context": {"backend": "cuda", "clock": "gpu", "date": "2026-11-29T00:00:00Z", "device": "test",
 "git_revision": "abc", "gpulab_version": "0.1.0", "schema_version": 2, "spec": "H200 SXM"},
 "results": [
  {"name": "kernel_bench", "params": {"block_size": "0", "level": "0", "level_name": "copy",
   "op": "transpose", "size": "64", "problem": "64 x 64 floats"},
   "metrics": [{"name": "time_ms", "provenance": "measured", "value": 1.0}]},
  {"name": "kernel_bench", "params": {"block_size": "0", "level": "1", "level_name": "naive",
   "op": "transpose", "size": "64", "problem": "64 x 64 floats"},
   "metrics": [{"name": "time_ms", "provenance": "measured", "value": 0.001}]}]}
JSON
text=$("$bench" --fidelity "$work/ladder.json" --require-order 2>&1)
expect "an order broken" 1 $? "bound: every ladder in its measured order: BROKEN" "$text"

text=$("$bench" --add-to-corpus "$work/corpus.json" "$work/gpu.json" 2>&1)
expect "a corpus made" 0 $? "1 measurements added to $work/corpus.json (1 in all)" "$text"
text=$("$bench" --add-to-corpus "$work/corpus.json" "$work/gpu.json" "$work/h100.json" 2>&1)
expect "the same kernel again replaces it" 0 $? "2 measurements added to $work/corpus.json (2 in all)" "$text"
text=$("$bench" --fidelity "$work/corpus.json" 2>&1)
expect "the corpus runs" 0 $? "over 2 kernels" "$text"
sed 's/"spec": "H100 SXM"/"spec": "H100 SXM", "stale": "rewritten since"/' "$work/corpus.json" \
  > "$work/stale.json"
text=$("$bench" --fidelity "$work/stale.json" 2>&1)
expect "a stale time is named" 0 $? "stale: rewritten since" "$text"
text=$("$bench" --add-to-corpus "$work/corpus.json" 2>&1)
expect "nothing to add" 2 $? "--add-to-corpus needs the results files to add" "$text"
text=$("$bench" --add-to-corpus "$work/corpus.json" "$work/sim.json" 2>&1)
expect "a sim file is not added" 2 $? "was not measured on a GPU" "$text"

finish
