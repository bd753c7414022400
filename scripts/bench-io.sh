#!/usr/bin/env bash
# hostd against fio on the same file, in one run: SEQ1M QD8 write and read,
# SEQ1M QD1 read, RND4K QD64 read, each measured twice:
#
#  1. the plain job: hostd with --verify off against fio as is (neither looks
#     at the data it reads; hostd's writes still carry its block headers);
#  2. with every 4 KiB block checked: hostd as `hostd run` reads (CRC-32C,
#     file id and offset of each block) against fio --verify=crc32c
#     --verify_interval=4096 (a CRC-32C header per 4 KiB block; its write
#     computes them, its reads check them).
#
# fio runs with io_uring and with libaio; the better engine is the reference.
# Prints throughput ratios hostd/fio and CPU seconds per 10^9 bytes for both
# (hostd: getrusage around the job; fio: usr_cpu+sys_cpu of its JSON times the
# job runtime). Best of ROUNDS rounds each; read jobs rotate their order.
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
FIO_VERIFY = ["--verify=crc32c", "--verify_interval=4096", "--do_verify=0"]

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-io: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    return p.stdout

def hostd_job(rw, bs, qd, verify):
    out = run([hostd, "bench-job", "--file", f, "--rw", rw, "--bs", bs, "--qd", str(qd),
               "--size", size, "--engine", "io_uring", "--verify", verify, "--overwrite", "--json"])
    r = json.loads(out)
    if r["corrupt_blocks"]:
        sys.exit(f"bench-io: hostd found {r['corrupt_blocks']} corrupt blocks")
    if verify == "on" and rw != "write" and r["verified_blocks"] * 4096 != r["bytes"]:
        sys.exit("bench-io: hostd did not verify every block it read")
    return r["bytes"] / r["seconds"], r["usr_s"] + r["sys_s"], r["bytes"]

def fio_job(rw, bs, qd, engine, verify=False):
    cmd = ["fio", "--name=bench", f"--filename={f}", "--direct=1", f"--ioengine={engine}",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--size={size}", "--output-format=json"]
    if rw == "write":
        cmd.append("--end_fsync=1")
    if verify:
        cmd += FIO_VERIFY
    j = json.loads(run(cmd))["jobs"][0]
    if j["error"]:
        sys.exit(f"bench-io: fio reported error {j['error']} ({' '.join(cmd)})")
    side = j["write"] if rw == "write" else j["read"]
    secs = j["job_runtime"] / 1000.0
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs
    return side["io_bytes"] / secs, cpu, side["io_bytes"]

results = {}  # (section, job, runner) -> best (rate, cpu per GB)

def keep(section, name, runs):
    for who, (rate, cpu, nbytes) in runs:
        best = results.setdefault((section, name, who), (0.0, 0.0))
        if rate > best[0]:
            results[(section, name, who)] = (rate, cpu / (nbytes / 1e9))

def rotated(todo, r):
    k = r % len(todo)  # no runner always goes first
    return todo[k:] + todo[:k]

def fio_engines(rw, bs, qd, verify):
    return [("fio/io_uring", lambda: fio_job(rw, bs, qd, "io_uring", verify)),
            ("fio/libaio", lambda: fio_job(rw, bs, qd, "libaio", verify))]

for r in range(rounds):
    # The file in hostd's format: the plain jobs of both, hostd's verified reads.
    for name, rw, bs, qd in jobs:
        if rw == "write":  # hostd last, so that its data stays for its reads
            runs = [(w, fn()) for w, fn in rotated(fio_engines(rw, bs, qd, False), r)]
            h = hostd_job(rw, bs, qd, "on")
            keep("plain", name, runs + [("hostd", h)])
            # Every block hostd writes carries its CRC: the same run is its
            # verified write.
            keep("verified", name, [("hostd", h)])
            continue
        todo = fio_engines(rw, bs, qd, False) + [
            ("hostd", lambda: hostd_job(rw, bs, qd, "off")),
            ("hostd/verified", lambda: hostd_job(rw, bs, qd, "on"))]
        runs = [(w, fn()) for w, fn in rotated(todo, r)]
        keep("plain", name, [x for x in runs if x[0] != "hostd/verified"])
        keep("verified", name, [("hostd", x[1]) for x in runs if x[0] == "hostd/verified"])
    # The file in fio's verify format: fio's verified write, then its reads.
    for name, rw, bs, qd in jobs:
        todo = fio_engines(rw, bs, qd, True)
        keep("verified", name, [(w, fn()) for w, fn in rotated(todo, r)])

print(f"bench-io: {size} file, best of {rounds} rounds; MB/s = 10^6 B/s; cpu = CPU seconds per 10^9 B")
print(f"{'job':<17} {'hostd MB/s':>10} {'fio MB/s':>9} {'fio engine':>10} {'ratio':>6} "
      f"{'hostd cpu':>9} {'fio cpu':>8}")
ok = True
for section, title in [
        ("plain", "plain jobs (hostd --verify off on reads; its writes carry their block headers)"),
        ("verified", "every 4 KiB block with a CRC-32C, checked on read "
                     "(hostd as `hostd run`; fio --verify=crc32c --verify_interval=4096)")]:
    print(f"-- {title}")
    for name, rw, bs, qd in jobs:
        h = results[(section, name, "hostd")]
        fe = max(("fio/io_uring", "fio/libaio"), key=lambda k: results[(section, name, k)][0])
        fr = results[(section, name, fe)]
        ratio = h[0] / fr[0]
        met = ratio >= 0.98 and h[1] <= fr[1]
        ok &= met
        iops = "  IOPS %.1fk vs %.1fk" % (h[0] / 4096 / 1e3, fr[0] / 4096 / 1e3) if bs == "4k" else ""
        print(f"{name:<17} {h[0]/1e6:>10.0f} {fr[0]/1e6:>9.0f} {fe[4:]:>10} {ratio:>6.3f} "
              f"{h[1]:>9.3f} {fr[1]:>8.3f}  {'ok' if met else 'MISSED'}{iops}")
print("targets (every ratio >= 0.98 and hostd cpu <= fio cpu): " + ("met" if ok else "NOT met"))
sys.exit(0)
PY
