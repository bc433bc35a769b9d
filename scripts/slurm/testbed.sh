#!/usr/bin/env bash
# slurm/testbed.sh: a single-node Slurm on this machine, for the test suite.
#
# Usage: scripts/slurm/testbed.sh start DIR   (prints SLURM_CONF=DIR/slurm.conf)
#        scripts/slurm/testbed.sh stop DIR
#
# Starts munged, slurmctld and slurmd (Debian's munge, slurmctld, slurmd and
# slurm-client packages) with their configuration, state, sockets, pid files
# and logs under DIR, on loopback ports picked free, as the user running it
# (root: slurmd must be able to start jobs as their user). `start` returns
# once the node takes jobs; it is idempotent (daemons already running under
# DIR are kept). `stop` ends the three daemons by their pid files.
set -euo pipefail

prog=slurm/testbed.sh
[ $# -eq 2 ] || { echo "usage: $prog start|stop DIR" >&2; exit 2; }
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
daemons=(slurmd slurmctld munged)

running() { [ -f "$dir/run/$1.pid" ] && kill -0 "$(cat "$dir/run/$1.pid")" 2>/dev/null; }

if [ "$action" = stop ]; then
    for d in "${daemons[@]}"; do
        if running "$d"; then kill "$(cat "$dir/run/$d.pid")" || true; fi
    done
    for d in "${daemons[@]}"; do
        for _ in $(seq 50); do running "$d" || break; sleep 0.1; done
        if running "$d"; then kill -9 "$(cat "$dir/run/$d.pid")" || true; fi
    done
    exit 0
fi
[ "$action" = start ] || { echo "usage: $prog start|stop DIR" >&2; exit 2; }

for p in munged slurmctld slurmd sbatch sinfo; do
    command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
    command -v "$p" >/dev/null 2>&1 || { echo "$prog: $p not found (apt-get install --no-install-recommends munge slurmctld slurmd slurm-client)" >&2; exit 1; }
done
mkdir -p "$dir/run" "$dir/log" "$dir/state" "$dir/spool"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
if [ ! -f "$dir/slurm.conf" ]; then
    cat >"$dir/slurm.conf" <<CONF
ClusterName=crawltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=5
# Crawl tasks mostly wait on the network: 8 task slots whatever the cores,
# so that a test's array runs at once (config_overrides lets the node
# declare more CPUs than it has).
SlurmdParameters=config_overrides
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=crawl Nodes=node1 Default=YES MaxTime=INFINITE State=UP
CONF
fi
if [ ! -f "$dir/munge.key" ]; then
    head -c 1024 /dev/urandom >"$dir/munge.key"
    chmod 400 "$dir/munge.key"
fi
export SLURM_CONF="$dir/slurm.conf"
running munged || munged --force --key-file "$dir/munge.key" --socket "$dir/run/munge.socket" \
    --pid-file "$dir/run/munged.pid" --log-file "$dir/log/munged.log" --seed-file "$dir/run/munge.seed"
for _ in $(seq 50); do [ -S "$dir/run/munge.socket" ] && break; sleep 0.1; done
running slurmctld || slurmctld -f "$SLURM_CONF"
running slurmd || slurmd -f "$SLURM_CONF" -N node1
# Ready when the node takes jobs (bounded: 30 s).
for _ in $(seq 150); do
    state=$(sinfo -h -N -o %t 2>/dev/null || true)
    case "$state" in idle*|mix*|alloc*) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
    sleep 0.2
done
echo "$prog: the node did not come up in 30 s (state '${state:-none}'); see $dir/log/" >&2
exit 1
