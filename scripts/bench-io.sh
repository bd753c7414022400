#!/usr/bin/env bash
# hostd against fio on the same disk, in one run: SEQ1M QD8 write and read,
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
# job runtime). Best of ROUNDS rounds each (highest rate, lowest CPU); every
# runner of a job runs in each round, in an order rotated from round to round.
# hostd runs twice per round: the fio figure is the best of its two engines'
# runs, and the best of 2N noisy runs beats the best of N by chance alone.
# fio's verified jobs use a second file of the same size beside the first
# (they need fio's own block headers).
#
# Environment: HOSTD (binary), BENCH_IO_DIR (a directory on the disk to test,
# default /var/tmp), BENCH_IO_SIZE (file size, default 2G), BENCH_IO_ROUNDS (5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export HOSTD=${HOSTD:-$root/hostd/target/release/hostd}
dir=${BENCH_IO_DIR:-/var/tmp}
export BENCH_IO_SIZE=${BENCH_IO_SIZE:-2G}
export BENCH_IO_ROUNDS=${BENCH_IO_ROUNDS:-5}
command -v fio >/dev/null || { echo "bench-io: fio is not installed (apt-get install fio)" >&2; exit 2; }
[ -x "$HOSTD" ] || { echo "bench-io: $HOSTD not built (just build)" >&2; exit 2; }
work=$(mktemp -d -p "$dir" throttlescope-bench-io.XXXXXX)
trap 'rm -rf "$work"' EXIT
export BENCH_IO_FILE="$work/bench.dat"
python3 - <<'PY'
import json, os, statistics, subprocess, sys

hostd = os.environ["HOSTD"]
f = os.environ["BENCH_IO_FILE"]
fv = f + ".fio-verify"
size = os.environ["BENCH_IO_SIZE"]
rounds = int(os.environ["BENCH_IO_ROUNDS"])
jobs = [  # name, hostd/fio rw, bs, qd
    ("SEQ1M QD8 write", "write", "1M", 8),
    ("SEQ1M QD8 read", "read", "1M", 8),
    ("SEQ1M QD1 read", "read", "1M", 1),
    ("RND4K QD64 read", "randread", "4k", 64),
]
FIO_VERIFY = ["--verify=crc32c", "--verify_interval=4096", "--do_verify=0", "--verify_state_save=0"]

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
    cmd = ["fio", "--name=bench", f"--filename={fv if verify else f}", "--direct=1", f"--ioengine={engine}",
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

def size_bytes(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("b").rstrip("i")
    return int(float(t[:-1]) * units[t[-1]]) if t[-1] in units else int(t)

st = os.statvfs(os.path.dirname(f))
need = 2 * size_bytes(size)
if st.f_bavail * st.f_frsize < need + (64 << 20):
    sys.exit(f"bench-io: {os.path.dirname(os.path.dirname(f))} has "
             f"{st.f_bavail * st.f_frsize / 1e9:.2f} GB free; two {size} files need "
             f"{need / 1e9:.2f} GB (set BENCH_IO_SIZE or BENCH_IO_DIR)")

results = {}  # (section, job, runner) -> best (rate, cpu per GB)
rates = {}  # (section, job, runner) -> every rate, for the spread
verbose = os.environ.get("BENCH_IO_VERBOSE") == "1"

def keep(section, name, runs):
    # Best of the rounds for each figure: the highest rate and, separately,
    # the lowest CPU per GB (host noise only ever slows a run down).
    for who, (rate, cpu, nbytes) in runs:
        rates.setdefault((section, name, who), []).append(rate)
        if verbose:
            print(f"  {section:<8} {name:<17} {who:<13} {rate / 1e6:8.0f} MB/s "
                  f"{cpu / (nbytes / 1e9):6.3f} cpu s/GB", file=sys.stderr)
        best = results.setdefault((section, name, who), (0.0, float("inf")))
        results[(section, name, who)] = (max(best[0], rate), min(best[1], cpu / (nbytes / 1e9)))

def rotated(todo, r):
    k = r % len(todo)  # no runner always goes first
    return todo[k:] + todo[:k]

def fio_engines(rw, bs, qd, verify):
    tag = "fio/verified/" if verify else "fio/"
    return [(tag + "io_uring", lambda: fio_job(rw, bs, qd, "io_uring", verify)),
            (tag + "libaio", lambda: fio_job(rw, bs, qd, "libaio", verify))]

# Two files side by side: F in hostd's format (both tools' plain jobs and
# hostd's verified reads) and FV in fio's verify format (fio's verified jobs).
for r in range(rounds):
    for name, rw, bs, qd in jobs:
        if rw == "write":
            # All six writes rotate (hostd's blocks always carry their CRC, so
            # each of its writes counts in both sections); if a fio plain
            # write was the last to write F, an unmeasured hostd write puts
            # hostd's data back for the reads.
            todo = (fio_engines(rw, bs, qd, False) + fio_engines(rw, bs, qd, True) +
                    [("hostd", lambda: hostd_job(rw, bs, qd, "on"))] * 2)
            runs = []
            for w, fn in rotated(todo, r):
                x = fn()
                runs += [(w, x), ("hostd/verified", x)] if w == "hostd" else [(w, x)]
            last_f = [w for w, _ in runs if "verified" not in w][-1]
            if last_f != "hostd":
                hostd_job(rw, bs, qd, "on")
        else:
            todo = (fio_engines(rw, bs, qd, False) + fio_engines(rw, bs, qd, True) +
                    [("hostd", lambda: hostd_job(rw, bs, qd, "off")),
                     ("hostd/verified", lambda: hostd_job(rw, bs, qd, "on"))] * 2)
            runs = [(w, fn()) for w, fn in rotated(todo, r)]
        keep("plain", name, [(w, x) for w, x in runs if "verified" not in w])
        keep("verified", name, [(w.replace("verified/", "").replace("/verified", ""), x)
                                for w, x in runs if "verified" in w])

print(f"bench-io: {size} file, best of {rounds} rounds; MB/s = 10^6 B/s; cpu = CPU seconds per 10^9 B")
print(f"{'job':<17} {'hostd MB/s':>10} {'fio MB/s':>9} {'fio engine':>10} {'ratio':>6} "
      f"{'hostd cpu':>9} {'fio cpu':>8} {'spread':>6} {'median':>6}")
ok = True
for section, title in [
        ("plain", "plain jobs (hostd --verify off on reads; its writes carry their block headers)"),
        ("verified", "every 4 KiB block with a CRC-32C, checked on read "
                     "(hostd as `hostd run`; fio --verify=crc32c --verify_interval=4096)")]:
    print(f"-- {title}")
    for name, rw, bs, qd in jobs:
        h = results[(section, name, "hostd")]
        fe = max(("fio/io_uring", "fio/libaio"), key=lambda k: results[(section, name, k)][0])
        # Rate: the better engine. CPU: the lowest of both engines' runs, as
        # hostd's is the lowest of its two runs per round.
        fr = (results[(section, name, fe)][0],
              min(results[(section, name, k)][1] for k in ("fio/io_uring", "fio/libaio")))
        ratio = h[0] / fr[0]
        met = ratio >= 0.98 and h[1] <= fr[1]
        ok &= met
        iops = "  IOPS %.1fk vs %.1fk" % (h[0] / 4096 / 1e3, fr[0] / 4096 / 1e3) if bs == "4k" else ""
        runs = rates[(section, name, fe)]
        spread = (max(runs) - min(runs)) / max(runs)
        fio_all = rates[(section, name, "fio/io_uring")] + rates[(section, name, "fio/libaio")]
        median = statistics.median(rates[(section, name, "hostd")]) / statistics.median(fio_all)
        print(f"{name:<17} {h[0]/1e6:>10.0f} {fr[0]/1e6:>9.0f} {fe[4:]:>10} {ratio:>6.3f} "
              f"{h[1]:>9.3f} {fr[1]:>8.3f} {spread:>6.0%} {median:>6.3f}  "
              f"{'ok' if met else 'MISSED'}{iops}")
print("spread = (slowest - fastest) / fastest of the reference fio engine's runs: how much the\n"
      "disk itself varied; a ratio inside it cannot tell the engines apart. median = median of\n"
      "hostd's runs / median of both fio engines' runs, less swayed by one lucky run than the\n"
      "best-of ratio the target uses (BENCH_IO_VERBOSE=1 prints every run)")
print("targets (every ratio >= 0.98 and hostd cpu <= fio cpu): " + ("met" if ok else "NOT met"))
sys.exit(0)
PY
