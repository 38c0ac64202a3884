#!/usr/bin/env bash
# scripts/gpu-check without a GPU: its usage errors, the refusal on a machine without one, and its
# steps and summary, run against this build with a stand-in nvidia-smi that lists a GPU (the
# device step then reports the sim backend; every step that needs a GPU is skipped).
#
#   gpu_check_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
source_dir="$1"
build_dir="$2"
script="$source_dir/scripts/gpu-check"
work=$(mktemp -d -t gpulab-gpu-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

text=$("$script" --help 2>&1); expect "--help" 0 $? "--skip LIST" "$text"
text=$("$script" --bogus 2>&1); expect "an unknown argument" 2 $? "unknown argument '--bogus'" "$text"
text=$("$script" --out 2>&1); expect "--out without a value" 2 $? "--out needs a value" "$text"
text=$("$script" --skip build,viewer 2>&1)
expect "an unknown step" 2 $? "--skip: no step 'viewer'" "$text"

# No GPU: nvidia-smi missing, or listing none.
mkdir -p "$work/none" "$work/one"
printf '#!/bin/sh\nexit 9\n' >"$work/none/nvidia-smi"
cat >"$work/one/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
  -L) echo "GPU 0: Stand-in GPU (UUID: GPU-0)" ;;
  *compute_cap*) echo "9.0" ;;
  *name*) echo "Stand-in GPU" ;;
  *) echo "stand-in nvidia-smi" ;;
esac
SMI
chmod +x "$work/none/nvidia-smi" "$work/one/nvidia-smi"
text=$(PATH="$work/none:$PATH" "$script" 2>&1)
expect "no GPU" 1 $? "no GPU (nvidia-smi -L lists none)" "$text"

# A GPU listed: the machine line, the device step against this build, the summary and logs, with
# every other step skipped; --out relative to the caller's folder.
cd "$work" || exit 1
text=$(PATH="$work/one:$PATH" "$script" --out logs --build "$build_dir" \
  --skip build,tests,grade,reports,bench,long,sweep,counters,profile,sanitizer 2>&1)
expect "the device step" 0 $? "ok      device" "$text"
expect "the machine line" 0 0 "machine: Stand-in GPU, sm_90" "$text"
[[ -s logs/summary.txt && -s logs/device.log && -s logs/machine.log ]] ||
  { echo "FAILED: summary.txt, device.log and machine.log under --out logs"; failures=$((failures + 1)); }
grep -q "gpulab device" logs/device.log ||
  { echo "FAILED: device.log does not hold the command"; failures=$((failures + 1)); }

# A step that fails is reported, and the run exits 1: the device step of a build with no gpulab.
text=$(PATH="$work/one:$PATH" "$script" --out logs2 --build "$work/no-build" \
  --skip build,tests,grade,reports,bench,long,sweep,counters,profile,sanitizer 2>&1)
expect "a failing step" 1 $? "FAILED  device (exit 127" "$text"

finish
