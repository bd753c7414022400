#!/usr/bin/env bash
# hostd against fio on the same file, in one run: SEQ1M QD8 write and read,
# SEQ1M QD1 read, RND4K QD64 read. For each job: hostd (io_uring engine, every
# block verified on read) and fio with io_uring and with libaio; the better fio
# engine is the reference. Prints throughput ratios hostd/fio and CPU seconds
# per GB for both (hostd: getrusage around the job; fio: usr_cpu+sys_cpu of its
# JSON times the job runtime). Best of ROUNDS rounds each.
#
# Environment: HOSTD (binary), BENCH_IO_DIR (a directory on the disk to test,
# default /var/tmp), BENCH_IO_SIZE (file size, default 2G), BENCH_IO_ROUNDS (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export HOSTD=${HOSTD:-$root/hostd/target/release/hostd}
dir=${BENCH_IO_DIR:-/var/tmp}
export BENCH_IO_SIZE=${BENCH_IO_SIZE:-2G}
export BENCH_IO_ROUNDS=${BENCH_IO_ROUNDS:-3}
command -v fio >/dev/null || { echo "bench-io: fio is not installed (apt-get install fio)" >&2; exit 2; }
[ -x "$HOSTD" ] || { echo "bench-io: $HOSTD not built (just build)" >&2; exit 2; }
work=$(mktemp -d -p "$dir" throttlescope-bench-io.XXXXXX)
trap 'rm -rf "$work"' EXIT
export BENCH_IO_FILE="$work/bench.dat"
python3 - <<'PY'
import json, os, subprocess, sys

hostd = os.environ["HOSTD"]
f = os.environ["BENCH_IO_FILE"]
size = os.environ["BENCH_IO_SIZE"]
rounds = int(os.environ["BENCH_IO_ROUNDS"])
jobs = [  # name, hostd/fio rw, bs, qd
    ("SEQ1M QD8 write", "write", "1M", 8),
    ("SEQ1M QD8 read", "read", "1M", 8),
    ("SEQ1M QD1 read", "read", "1M", 1),
    ("RND4K QD64 read", "randread", "4k", 64),
]

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-io: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    return p.stdout

def hostd_job(rw, bs, qd, verify="on"):
    out = run([hostd, "bench-job", "--file", f, "--rw", rw, "--bs", bs, "--qd", str(qd),
               "--size", size, "--engine", "io_uring", "--verify", verify, "--overwrite", "--json"])
    r = json.loads(out)
    if r["corrupt_blocks"]:
        sys.exit(f"bench-io: hostd found {r['corrupt_blocks']} corrupt blocks")
    return r["bytes"] / r["seconds"], r["usr_s"] + r["sys_s"], r["bytes"]

def fio_job(rw, bs, qd, engine):
    cmd = ["fio", "--name=bench", f"--filename={f}", "--direct=1", f"--ioengine={engine}",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--size={size}", "--output-format=json"]
    if rw == "write":
        cmd.append("--end_fsync=1")
    j = json.loads(run(cmd))["jobs"][0]
    side = j["write"] if rw == "write" else j["read"]
    secs = j["job_runtime"] / 1000.0
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs
    return side["io_bytes"] / secs, cpu, side["io_bytes"]

# The file starts with hostd's data so that hostd's reads verify; in write
# jobs hostd runs last for the same reason; read jobs rotate the order.
run([hostd, "bench-job", "--file", f, "--rw", "write", "--bs", "1M", "--qd", "8", "--size", size, "--json"])
results = {}
for r in range(rounds):
    for name, rw, bs, qd in jobs:
        todo = [("fio/io_uring", lambda: fio_job(rw, bs, qd, "io_uring")),
                ("fio/libaio", lambda: fio_job(rw, bs, qd, "libaio")),
                ("hostd", lambda: hostd_job(rw, bs, qd))]  # writes: hostd last, its data stays
        if rw != "write":
            todo.append(("hostd/noverify", lambda: hostd_job(rw, bs, qd, "off")))
            k = r % len(todo)  # reads: rotate so no runner always goes first
            todo = todo[k:] + todo[:k]
        runs = [(who, fn()) for who, fn in todo]
        for who, (rate, cpu, nbytes) in runs:
            best = results.setdefault((name, who), (0.0, 0.0))
            if rate > best[0]:
                results[(name, who)] = (rate, cpu / (nbytes / 1e9))

print(f"bench-io: {size} file, best of {rounds} rounds, MB/s = 10^6 B/s; hostd verifies every 4 KiB block on read")
print(f"{'job':<17} {'hostd MB/s':>10} {'fio MB/s':>10} {'fio engine':>10} {'ratio':>6} {'hostd cpu s/GB':>14} {'fio cpu s/GB':>12}  {'no-verify ratio, cpu s/GB'}")
ok = True
for name, rw, bs, qd in jobs:
    h = results[(name, "hostd")]
    fe = max(("fio/io_uring", "fio/libaio"), key=lambda k: results[(name, k)][0])
    fr = results[(name, fe)]
    ratio = h[0] / fr[0]
    extra = ""
    if (name, "hostd/noverify") in results:
        nv = results[(name, "hostd/noverify")]
        extra = f"{nv[0] / fr[0]:.3f}, {nv[1]:.3f}"
    unit = 1e6
    iops = " (IOPS %.0fk vs %.0fk)" % (h[0] / 4096 / 1e3, fr[0] / 4096 / 1e3) if bs == "4k" else ""
    print(f"{name:<17} {h[0]/unit:>10.0f} {fr[0]/unit:>10.0f} {fe[4:]:>10} {ratio:>6.3f} {h[1]:>14.3f} {fr[1]:>12.3f}  {extra}{iops}")
    ok &= ratio >= 0.98 and h[1] <= fr[1]
print("targets (ratio >= 0.98 and cpu/GB <= fio): " + ("met" if ok else "NOT met"))
PY
