#!/usr/bin/env bash
# `kw slurm` on a real Slurm: starts a single-node Slurm on this machine (munged, slurmctld and
# slurmd from the Debian packages, installed when missing; no systemd: a short slurm.conf in a
# temporary directory and the daemons started directly, as root), then:
#   1. makes 4 PoCL captures (vector_add at 4 sizes: one tuning key, 4 records);
#   2. `kw slurm --submit` a 3-task array (exhaustive search) and its afterany merge job;
#   3. cancels task 1 while it is tuning (after its results log has evaluations in it);
#   4. checks that the merge job failed and named shard 1 as missing;
#   5. `kw slurm --resubmit-missing`, waits, checks that the second merge succeeded;
#   6. checks that the merged wisdom has the same winners as one `kw tune` process over the
#      same captures.
# The search is exhaustive and the objective is a fixed function of the configuration and the
# problem size (not the time: on a shared 2-core machine time is noise), so both runs must pick
# the same winner per capture; the resubmitted task resumes from the cancelled task's log.
#
# Exit status: 0 passed (last line `slurm-check: PASS`), 0 skipped where Slurm cannot be
# installed or started as root here (last line `slurm-check: SKIP: <why>`), 1 failed
# (`slurm-check: FAIL: <why>`). Run again after a run that left daemons and jobs (killed), it
# cancels those jobs and stops those daemons first (their pid files are in the state directory).
#   KW=/path/to/kw      the kw binary (default: target/debug/kw, built when missing)
#   KW_SLURM_CHECK_DIR  the state directory (default: ${TMPDIR:-/tmp}/kw-slurm-check-<checksum
#                       of this checkout's path>)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# One state directory per checkout: a run finds what an earlier run of this checkout left, and
# runs from other checkouts (beside this one) are left alone.
T="${KW_SLURM_CHECK_DIR:-${TMPDIR:-/tmp}/kw-slurm-check-$(printf %s "$root" | cksum | cut -d' ' -f1)}"
started=$(date +%s)

say() { echo "slurm-check: $*"; }
skip() { say "SKIP: $*"; exit 0; }
fail() {
  say "FAIL: $*"
  for f in "$T"/slurmctld.log "$T"/slurmd.log; do
    [ -f "$f" ] && { echo "--- last lines of $f"; tail -n 15 "$f"; }
  done
  exit 1
}

# --- Slurm and munge: installed when missing --------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
  # slurmd must start jobs as their users: it runs as root.
  skip "needs root to run slurmd (run it as root, e.g. in CI or a container)"
fi
. "$root/tools/lib/install-slurm.sh"
if ! have_slurm; then
  say "installing slurmctld slurmd slurm-client munge"
  install_slurm && have_slurm ||
    skip "the Debian packages slurmctld slurmd slurm-client munge could not be installed (apt-get)"
fi

# --- A fresh single-node cluster in $T ------------------------------------------------------
stop_daemons() {
  # Jobs first (their processes outlive slurmd), through the controller while it runs.
  local ctl
  ctl=$(cat "$T/slurmctld.pid" 2>/dev/null || true)
  if [ -n "$ctl" ] && kill -0 "$ctl" 2>/dev/null && [ -f "$T/slurm.conf" ]; then
    export SLURM_CONF="$T/slurm.conf"
    jobs=$(timeout 10 squeue -h -o '%A' 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      for _ in $(seq 20); do
        [ -z "$(timeout 5 squeue -h -o '%A' 2>/dev/null || true)" ] && break
        sleep 1
      done
    fi
  fi
  for p in "$T"/slurmd.pid "$T"/slurmctld.pid "$T"/munged.pid; do
    if [ -f "$p" ]; then
      pid=$(cat "$p" 2>/dev/null || true)
      [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    fi
  done
  sleep 1
  for p in "$T"/slurmd.pid "$T"/slurmctld.pid "$T"/munged.pid; do
    if [ -f "$p" ]; then
      pid=$(cat "$p" 2>/dev/null || true)
      [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
      rm -f "$p"
    fi
  done
}
exec 9>"$T.lock"
flock -n 9 || { say "FAIL: another tools/slurm-check.sh runs with $T"; exit 1; }
stop_daemons # what an earlier run left
rm -rf "$T"
mkdir -p "$T"/state "$T"/spool "$T"/munge "$T"/shared "$T"/work
chmod 700 "$T"/munge
trap 'stop_daemons' EXIT

host=$(uname -n) # the name slurmd finds itself by (as `hostname -s`)
host=${host%%.*}
cpus=$(nproc)
mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
# Ports away from a site's own Slurm (6817/6818) and from a run beside this one.
port=$((20000 + $$ % 20000))
cat >"$T/slurm.conf" <<EOF
ClusterName=kwcheck
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=3600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=kwcheck Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"

dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
  --pid-file="$T/munged.pid" --log-file="$T/munge/munged.log" --seed-file="$T/munge/seed" 9>&- ||
  skip "munged does not start here ($(tail -n 2 "$T/munge/munged.log" 2>/dev/null))"
# (The daemons do not inherit the lock of this run: fd 9 is closed for them.)
slurmctld -f "$T/slurm.conf" 9>&- || fail "slurmctld did not start"
slurmd -f "$T/slurm.conf" 9>&- || fail "slurmd did not start"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o '%t' 2>/dev/null || true)
  [ "$state" = "idle" ] && break
  sleep 1
done
[ "$state" = "idle" ] || fail "the node $host is not idle after 60 s (state: ${state:-none})"
say "Slurm up: node $host idle ($cpus CPUs), $(slurmctld -V)"

# --- kw and the captures ------------------------------------------------------------------------
if [ -z "${KW:-}" ]; then
  (cd "$root" && cargo build -q -p kw-cli)
  KW="$root/target/debug/kw"
fi
[ -x "$KW" ] || fail "no kw binary at $KW"
# No user directory takes part; one compile cache for every run (compiles are not what this
# checks, and a cold cache keeps the array's tasks busy long enough to cancel one).
export KW_USER_WISDOM_DIR="$T/work/user-wisdom" KW_STATE_DIR="$T/work/state"
export KW_CACHE_DIR="$T/work/cache" KW_WISDOM_PATH=""
cd "$T/work"
for n in 1024 4096 16384 65536; do
  "$KW" tune --bundled "vector_add:$n" --budget 1 --confirm-rounds 0 --no-prior \
    --wisdom-dir "$T/work/scratch" >/dev/null 2>&1 || fail "capturing vector_add:$n"
done
rm -rf "$KW_CACHE_DIR"
ls captures/*.kwcap >/dev/null || fail "no captures in $T/work/captures"
# A fixed objective: lowest for block_size_x * elems_per_thread * 16 nearest the problem size,
# then the fewest elements per thread, not strided, not unrolled.
objective='(block_size_x*elems_per_thread*16 - problem_size.x)*(block_size_x*elems_per_thread*16 - problem_size.x) + elems_per_thread + 3*strided + 5*unroll'
tune_opts=(--no-prior --confirm-rounds 0 --objective "$objective" --objective-name fixed)

# --- The array, one task cancelled mid-run ----------------------------------------------------
S="$T/shared/run"
out=$("$KW" slurm captures --out "$S" --tasks 3 --gpus-per-task 0 --cpus-per-task 1 \
  --time 10:00 --partition kwcheck --strategy exhaustive --submit -- "${tune_opts[@]}") ||
  fail "kw slurm --submit: $out"
echo "$out" | sed 's/^/  /'
grep -q -- '--dependency\|afterany' "$S/kw-slurm-merge.sh" && fail "the merge script holds its dependency (it is given at submission)"
array=$(echo "$out" | sed -n 's/^submitted: array job \([0-9]*\), merge job \([0-9]*\)$/\1/p')
merge=$(echo "$out" | sed -n 's/^submitted: array job \([0-9]*\), merge job \([0-9]*\)$/\2/p')
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids in kw slurm's output"
scontrol show job "$merge" | grep -q "Dependency=afterany:${array}" ||
  fail "the merge job $merge does not depend on the array with afterany: $(scontrol show job "$merge" | grep -o 'Dependency=[^ ]*')"

# Cancel task 1 once its results log holds two evaluations (a header line, then one line per
# evaluation): it has about 90 configurations to go, seconds of work even with every compile
# cached.
log1="$S/shards/1/logs/$(basename "$(ls captures/*.kwcap | LC_ALL=C sort | sed -n 2p)" .kwcap).tune.jsonl"
for _ in $(seq 1200); do
  [ -f "$log1" ] && [ "$(wc -l <"$log1")" -ge 3 ] && break
  sleep 0.1
done
[ -f "$log1" ] || fail "task 1 did not start tuning within 120 s ($log1)"
scancel "${array}_1" || fail "scancel ${array}_1"
say "cancelled task 1 after $(wc -l <"$log1") lines of its results log"

wait_job() { # job id: waits until Slurm no longer lists it as pending or running
  for _ in $(seq 600); do
    st=$(squeue -h -j "$1" -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
    [ -z "$st" ] && return 0
    sleep 1
  done
  fail "job $1 still ${st} after 10 minutes"
}
wait_job "$array"
wait_job "$merge"
merge_log="$S/slurm-logs/merge-$merge.out"
[ -f "$merge_log" ] || fail "no merge output $merge_log"
sed 's/^/  merge: /' "$merge_log"
scontrol show job "$merge" | grep -q 'JobState=FAILED' ||
  fail "the merge job did not fail with a shard missing: $(scontrol show job "$merge" | grep -o 'JobState=[^ ]*')"
grep -q 'shard 1 (array task 1) is missing' "$merge_log" || fail "the merge did not name shard 1 as missing"
grep -q 'shard [02] (array task [02]) is' "$merge_log" && fail "the merge named a shard that completed"
# The same from the command, by its exit status.
if "$KW" slurm merge "$S" >/dev/null 2>&1; then fail "kw slurm merge succeeded with shard 1 missing"; fi

# --- Resubmit what is missing -----------------------------------------------------------------
out=$("$KW" slurm --resubmit-missing "$S") || fail "kw slurm --resubmit-missing: $out"
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q 'resubmitted task(s) 1$' || fail "the resubmission is not of task 1 only"
array2=$(echo "$out" | sed -n 's/^submitted: array job \([0-9]*\), merge job \([0-9]*\)$/\1/p')
merge2=$(echo "$out" | sed -n 's/^submitted: array job \([0-9]*\), merge job \([0-9]*\)$/\2/p')
[ -n "$array2" ] && [ -n "$merge2" ] || fail "no job ids in the resubmission's output"
wait_job "$array2"
wait_job "$merge2"
sed 's/^/  merge: /' "$S/slurm-logs/merge-$merge2.out"
scontrol show job "$merge2" | grep -q 'JobState=COMPLETED' ||
  fail "the second merge job did not complete: $(scontrol show job "$merge2" | grep -o 'JobState=[^ ]*')"
grep -q 'evaluations ([1-9][0-9]* from the log)' "$S/slurm-logs/task-${array2}_1.out" ||
  fail "the resubmitted task did not resume from the cancelled task's results log"

# --- The same captures in one process ----------------------------------------------------------
"$KW" tune captures/*.kwcap --strategy exhaustive --wisdom-dir "$T/work/one" "${tune_opts[@]}" \
  >"$T/work/one.out" 2>&1 || fail "the one-process kw tune: $(tail -n 5 "$T/work/one.out")"
winners() { # wisdom directory: one line per record, its problem size and configuration
  "$KW" wisdom show "$1/vector_add.json" | sed -nE 's/^#[0-9]+ +([^ ]+) .* ms  (.*)$/\1 \2/p'
}
a=$(winners "$S/wisdom" | sort)
b=$(winners "$T/work/one" | sort)
echo "$a" | sed 's/^/  merged:      /'
echo "$b" | sed 's/^/  one process: /'
[ "$(echo "$a" | wc -l)" -eq 4 ] || fail "the merged wisdom has $(echo "$a" | wc -l) records, not 4"
[ "$a" = "$b" ] || fail "the merged wisdom's winners differ from the one-process run's"
say "PASS ($(($(date +%s) - started)) s)"
