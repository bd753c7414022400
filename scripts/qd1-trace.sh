#!/usr/bin/env bash
# Where a QD1 random read's time goes, hostd against fio at its best, by the kernel's own
# tracepoints (issue 45): one 4 KiB random read at a time on ext4 on a loop device in RAM,
# each runner traced system-wide with perf (sched_switch, sched_wakeup, sched_migrate_task,
# io_uring_submit_req), then each I/O of the job thread (from one submit_req to the next)
# cut into:
#   to_sleep  submit_req to the job thread switching out asleep (the rest of the submitting
#             io_uring_enter, the runner's code, the waiting io_uring_enter)
#   asleep    switched out to its sched_wakeup (the loop device's worker reads the page and
#             completes the request)
#   to_run    sched_wakeup to switched back in (the scheduler)
#   to_next   switched in to the next submit_req (task work posts the completion, the
#             runner's code, the next io_uring_enter)
# and where the loop device's worker (the kworker the submission wakes) ran: on the job
# thread's CPU (it must wait for the job thread to sleep or be preempted) or on the other,
# and how long from its wake-up to running.
# and how many wake-ups came from the other CPU (the worker ran there: an inter-processor
# wake-up, which in a VM is a hypervisor exit). Medians and means per runner, I/Os that
# never slept, and the job thread's migrations per 1 000 I/Os. Tracing adds its own cost
# to each event: compare the runners with each other, not with an untraced run.
#
# Usage: qd1-trace.sh [IO_SIZE]   (root; HOSTD=path to hostd, default the release build;
#        QD1_TRACE_PIN=CPU: both runners pinned to that CPU with taskset;
#        QD1_TRACE_FIO_FIRST=1: fio runs first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hostd=${HOSTD:-$root/hostd/target/release/hostd}
io_size=${1:-64M}
pin=()
[[ -n ${QD1_TRACE_PIN:-} ]] && pin=(taskset -c "$QD1_TRACE_PIN")
for t in perf fio mkfs.ext4 losetup; do command -v $t >/dev/null || { echo "qd1-trace: $t missing" >&2; exit 2; }; done
work=$(mktemp -d /tmp/qd1-trace.XXXXXX)
img=$(mktemp -p /dev/shm qd1-trace.XXXXXX.img)
dev='' mnt="$work/mnt"
cleanup() { mountpoint -q "$mnt" && umount "$mnt"; [[ -n $dev ]] && losetup -d "$dev"; rm -f "$img"; rm -rf "$work"; }
trap cleanup EXIT
truncate -s 1G "$img"
dev=$(losetup --find --show "$img")
mkfs.ext4 -q -F "$dev"
mkdir -p "$mnt" && mount "$dev" "$mnt"
file="$mnt/bench.dat"
"$hostd" bench-job --file "$file" --rw write --bs 1M --size 512M --verify off >/dev/null
events=sched:sched_switch,sched:sched_wakeup,sched:sched_migrate_task,io_uring:io_uring_submit_req
trace() { # name command...
    local name=$1; shift
    perf record -q -a -e "$events" -o "$work/$name.data" -- "${pin[@]}" "$@" >"$work/$name.out" 2>&1
    perf script -i "$work/$name.data" -F comm,tid,cpu,time,event,trace >"$work/$name.txt" 2>/dev/null
}
run_hostd() { trace "hostd$1" "$hostd" bench-job --file "$file" --rw randread --bs 4k --size 512M --io-size "$io_size" --qd 1 --verify off; }
run_fio() {
    trace "fio$1" fio --name=qd1 --filename="$file" --rw=randread --bs=4k --size=512M --io_size="$io_size" \
        --iodepth=1 --direct=1 --ioengine=io_uring --fixedbufs=1 --registerfiles=1 --norandommap \
        --randrepeat=0 --output-format=json
}
# QD1_TRACE_ROUNDS rounds (default 2) on the same device, the order alternated from round
# to round (QD1_TRACE_FIO_FIRST=1: fio first in the first round), so that neither always
# follows the other.
rounds=${QD1_TRACE_ROUNDS:-2}
for ((r = 1; r <= rounds; r++)); do
    if (((r + ${QD1_TRACE_FIO_FIRST:-0}) % 2 == 0)); then run_fio "$r"; run_hostd "$r"; else run_hostd "$r"; run_fio "$r"; fi
done
python3 - "$work" <<'PY'
import re, statistics as st, sys
work = sys.argv[1]
line_re = re.compile(r'^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')
import glob, os
names = sorted((os.path.basename(p)[:-4] for p in glob.glob(f"{work}/*.txt")),
               key=lambda n: (int(re.sub(r"\D", "", n)), n))
for name in names:
    comm = re.sub(r"\d", "", name)
    rows = []
    for l in open(f"{work}/{name}.txt"):
        m = line_re.match(l)
        if m:
            rows.append((m[1], int(m[2]), int(m[3]), float(m[4]) * 1e6, m[5], m[6]))
    counts = {}
    for c, tid, cpu, t, ev, tr in rows:
        if ev == "io_uring:io_uring_submit_req" and c.startswith(comm):
            counts[tid] = counts.get(tid, 0) + 1
    job = max(counts, key=counts.get)
    parts = {k: [] for k in ("to_sleep", "asleep", "to_run", "to_next", "per_io")}
    never_slept = cross = migrations = 0
    cyc = None  # the current I/O: its marks
    kw = {"same_cpu": 0, "other_cpu": 0, "start": [], "start_same": [], "start_other": []}
    def close(c, t):
        global never_slept
        parts["per_io"].append(t - c["submit"])
        if "kw_in" in c:
            same = c["kw_in"][1] == c["cpu"]
            kw["same_cpu" if same else "other_cpu"] += 1
            d = c["kw_in"][0] - c["kworker"][0]
            kw["start"].append(d)
            kw["start_same" if same else "start_other"].append(d)
        if "in" in c and "sleep" in c and "wake" in c:
            parts["to_sleep"].append(c["sleep"] - c["submit"])
            parts["asleep"].append(c["wake"] - c["sleep"])
            parts["to_run"].append(c["in"] - c["wake"])
            parts["to_next"].append(t - c["in"])
        else:
            never_slept += 1
    for c, tid, cpu, t, ev, tr in rows:
        if ev == "sched:sched_migrate_task" and re.search(rf'\bpid={job}\b', tr):
            migrations += 1
        elif ev == "io_uring:io_uring_submit_req" and tid == job:
            if cyc is not None:
                close(cyc, t)
            cyc = {"submit": t, "cpu": cpu}
        elif cyc is None:
            continue
        elif ev == "sched:sched_wakeup" and "kworker" not in cyc and tr.startswith("comm=kworker"):
            m = re.search(r'pid=(\d+).*target_cpu=(\d+)', tr)
            cyc["kworker"] = (t, int(m[1]), int(m[2]))
        elif ev == "sched:sched_switch" and "kworker" in cyc and "kw_in" not in cyc and re.search(rf'next_pid={cyc["kworker"][1]}\b', tr):
            cyc["kw_in"] = (t, cpu)
        elif ev == "sched:sched_switch" and re.search(rf'prev_pid={job}\b', tr) and "sleep" not in cyc:
            cyc["sleep"] = t
            cyc["cpu"] = cpu
        elif ev == "sched:sched_wakeup" and re.search(rf'\bpid={job}\b', tr) and "sleep" in cyc and "wake" not in cyc:
            cyc["wake"] = t
            cross += cpu != cyc["cpu"]
        elif ev == "sched:sched_switch" and re.search(rf'next_pid={job}\b', tr) and "wake" in cyc and "in" not in cyc:
            cyc["in"] = t
    n = len(parts["per_io"])
    slept = len(parts["asleep"])
    print(f"{name}: {n} I/Os traced; {migrations * 1000 / max(n, 1):.1f} migrations of the job thread per 1 000 I/Os; "
          f"{never_slept} never slept; of {slept} wake-ups {100 * cross / max(slept, 1):.0f} % from the other CPU")
    nk = kw["same_cpu"] + kw["other_cpu"]
    med = lambda v: st.median(v) if v else float("nan")
    print(f"  loop worker: ran on the job thread's CPU for {100 * kw['same_cpu'] / max(nk, 1):.0f} % of {nk} I/Os; "
          f"woken to running median {med(kw['start']):.0f} µs (same CPU {med(kw['start_same']):.0f}, other {med(kw['start_other']):.0f})")
    for k, v in parts.items():
        if v:
            print(f"  {k:9s} median {st.median(v):7.2f} µs  mean {st.mean(v):7.2f} µs")
PY
for ((r = 1; r <= rounds; r++)); do
    printf 'round %d: hostd %s; fio %.0f MB/s\n' "$r" "$(grep -ho '[0-9]* MB/s' "$work/hostd$r.out")" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["bw_bytes"]/1e6)' "$work/fio$r.out")"
done
