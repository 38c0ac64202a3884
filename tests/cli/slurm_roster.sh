#!/usr/bin/env bash
# `gpulab grade --roster --slurm` through a real Slurm: starts a single-node cluster on this
# machine (munged, slurmctld and slurmd from Debian's packages, localhost only, everything in a
# temporary folder), grades 10 submissions of the class the CliRosterClass test left (with its
# gradebook, graded locally) as a job array, and checks:
#   1. a task cancelled before it ran (scancel, as a preemption would) leaves its submission
#      without a grade, and --collect lists it with the reason and exits 1;
#   2. the same --slurm command (--wait) submits only that one, and the gradebook collected is
#      the local gradebook's 10 rows, byte for byte.
# Exit 77 (ctest: skipped), with the reason, only where Slurm cannot start here.
#
#   slurm_roster.sh GPULAB CLASS_DIR
set -uo pipefail

gpulab=$1
class_dir=$2
skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*"
  for log in "$work"/slurmctld.log "$work"/slurmd.log "$work"/out/slurm/*.log; do
    [[ -f $log ]] && { echo "--- $log (end)"; tail -15 "$log"; }
  done
  exit 1
}

for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" >/dev/null || skip "no $tool here (scripts/setup installs slurm-wlm and munge)"
done
[[ $(id -u) == 0 ]] || skip "the test's Slurm runs its daemons and jobs as root; this is uid $(id -u)"
[[ -f $class_dir/class-grades/gradebook.csv ]] ||
  fail "no graded class in $class_dir (the test gpulab.test.cli_roster_class/CliRosterClass.* makes it)"

work=$(mktemp -d /tmp/gpulab-slurm.XXXXXX)
started_munge=0
stop() {
  if [[ -n ${SLURM_CONF:-} ]]; then
    squeue --noheader --format=%A 2>/dev/null | sort -u | xargs -r scancel 2>/dev/null
  fi
  for daemon in slurmd slurmctld; do
    if [[ -f $work/$daemon.pid ]]; then
      kill "$(cat "$work/$daemon.pid")" 2>/dev/null
    fi
  done
  if ((started_munge)) && [[ -f /run/munge/munged.pid ]]; then
    kill "$(cat /run/munge/munged.pid)" 2>/dev/null
  fi
  sleep 1
  rm -rf "$work"
}
trap stop EXIT

# Munge: the one already running, or one of our own.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
  munged --force >"$work/munged.out" 2>&1 || skip "munged does not start: $(tail -1 "$work/munged.out")"
  started_munge=1
  for _ in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n | unmunge >/dev/null 2>&1 || skip "munge does not answer"
fi

host=$(hostname -s)
port=$((20000 + ($$ % 10000) * 2))
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gpulabtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=grading Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 ||
  skip "slurmctld does not start: $(tail -1 "$work/slurmctld.out")"
slurmd -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 ||
  skip "slurmd does not start: $(tail -1 "$work/slurmd.out")"
for _ in $(seq 60); do
  [[ $(sinfo --noheader --format=%T 2>/dev/null) == idle* ]] && break
  sleep 0.5
done
[[ $(sinfo --noheader --format=%T 2>/dev/null) == idle* ]] ||
  skip "the node does not come up: sinfo says '$(sinfo --noheader --format=%T 2>&1)'"
echo "slurm: node $host idle, ports $port and $((port + 1)), $(nproc) CPUs"

# The first 10 students of the class (every kind of submission), as graded locally.
n=10
last=$(printf %02d $((n - 1)))
mkdir -p "$work/class"
for i in $(seq -w 0 "$last"); do
  cp -r "$class_dir/class/student-$i" "$work/class/"
done
grade=("$gpulab" grade lab03 --backend sim --timeout 4 --seal "$class_dir/seal.sha256"
  --roster "$work/class" --out "$work/out" -j 2)

# Round 1, its last task cancelled before it runs (the array runs 2 at a time: it waits).
"${grade[@]}" --slurm >"$work/round1.txt" 2>&1 || fail "--slurm: $(cat "$work/round1.txt")"
cat "$work/round1.txt"
job=$(cat "$work/out/slurm/round-1.job") || fail "no job id written"
scancel "${job}_$((n - 1))" || fail "scancel ${job}_$((n - 1))"
for _ in $(seq 900); do
  [[ -z $(squeue --noheader --jobs="$job" 2>/dev/null) ]] && break
  sleep 1
done
[[ -z $(squeue --noheader --jobs="$job") ]] || fail "job $job still queued after 15 minutes"

"${grade[@]}" --collect >"$work/collect.txt" 2>&1
collected=$?
cat "$work/collect.txt"
((collected == 1)) || fail "--collect exited $collected with a submission ungraded (expected 1)"
grep -q "1 of $n submission(s) have no grade" "$work/collect.txt" || fail "--collect does not say 1 of $n"
grep -q "student-$last: round-1 task $((n - 1)) (job $job) ended before grading it" "$work/collect.txt" ||
  fail "--collect does not name student-$last's cancelled task"
grep -q "^student-$last,,,,not graded$" "$work/out/gradebook.csv" || fail "student-$last has a row"

# Resubmitted: only what has no grade; the gradebook is the local one.
"${grade[@]}" --slurm --wait >"$work/round2.txt" 2>&1 || fail "--slurm --wait: $(cat "$work/round2.txt")"
cat "$work/round2.txt"
grep -q "$((n - 1)) already graded and unchanged (kept; --regrade grades them again), 1 to grade on Slurm" \
  "$work/round2.txt" || fail "round 2 did not submit exactly the one ungraded submission"
head -$((n + 1)) "$class_dir/class-grades/gradebook.csv" >"$work/local.csv"
diff "$work/local.csv" "$work/out/gradebook.csv" || fail "the Slurm gradebook differs from the local one"
echo "PASSED: $n submissions graded through sbatch --array (job $job and a resubmission); the"
echo "gradebook collected equals the local one"
