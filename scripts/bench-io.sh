#!/usr/bin/env bash
# hostd against fio at its best on the same disk, in one run: SEQ1M QD8 write
# and read, SEQ1M QD1 read and write, RND4K QD64 read, RND4K QD1 read and
# write, each measured twice:
#
#  1. the plain job: hostd with --verify off against fio as is (neither looks
#     at the data it reads; hostd's writes still carry its block headers);
#  2. with every 4 KiB block checked: hostd as `hostd run` reads (CRC-32C,
#     file id and offset of each block) against fio --verify=crc32c
#     --verify_interval=4096 (a CRC-32C header per 4 KiB block; its write
#     computes them, its reads check them).
#
# fio at its best: io_uring with registered files and fixed buffers
# (--registerfiles=1 --fixedbufs=1) and libaio; the better engine (by rate)
# is the reference. hostd waits for completions as fio does by default (asleep
# in io_uring_enter at once); at RND4K QD1 it also runs with --poll, to show
# what polling changes (its figures are not the ones compared). hostd times
# every I/O (as `hostd run` does); with
# BENCH_IO_LATENCY_COST=1 (the default) it also runs each plain job with
# --latency off, to show what the timing costs.
# Prints throughput ratios hostd/fio and CPU seconds per 10^9 bytes for both
# (hostd: getrusage around the job; fio: usr_cpu+sys_cpu of its JSON times the
# job runtime), and latency percentiles side by side: hostd's (issue to
# completion, HdrHistogram, 3 significant digits) and fio's clat (the same
# span; fio's bins hold ~1.6 %) and lat, each the median over the
# rounds. Best of ROUNDS rounds for rate and CPU (highest rate, lowest CPU);
# every runner of a job runs in each round, in an order rotated from round to
# round. hostd runs twice per round: the fio figure is the best of its two
# engines' runs, and the best of 2N noisy runs beats the best of N by chance
# alone.
# fio's verified jobs use a second file of the same size beside the first
# (they need fio's own block headers); random writes go to a third file so
# that they leave the others' contents alone.
#
# Which device: the targets (ratio >= 0.98, CPU/GB <= fio's) assume the engines
# are the limit, which a RAM-backed device gives only in part (docs/benchmarks.md
# has the figures). On ext4 on a loop device over /dev/shm every I/O goes through
# a kernel worker thread: at QD1 where the scheduler runs that thread (on the
# submitter's CPU or the other one) decides the rate, and fio's own runs swing
# 115-194 MB/s with it. On zram the submitting thread does the copy itself (no
# worker), so reads compare the engines; its writes compress the data in that
# call, so their cost depends on what is written (fio's default scrambled
# buffers write at a third of its verify buffers' rate) and the verified
# section, where both write incompressible blocks, is the one to read there.
#
# Costs per I/O (BENCH_IO_COUNTS=1, the default), which do not move with the
# machine's load as rates do: user-space instructions per I/O (callgrind; perf has
# no hardware counters in this VM), system calls per I/O (perf stat's
# raw_syscalls:sys_enter tracepoint), requests io_uring punted to its io-wq workers
# per I/O (io_uring:io_uring_queue_async_work) and context switches per I/O, each by
# the difference between two runs of different sizes (so start-up and set-up cancel
# out), for hostd and for both fio engines; and user and system CPU per I/O from the
# measured rounds, median with the range over the rounds.
#
# Environment: HOSTD (binary), BENCH_IO_DIR (a directory on the disk to test,
# default /var/tmp; `ram:SIZE`, e.g. ram:3G: a fresh ext4 on a loop device over a
# file in /dev/shm, removed at the end; needs root; `zram:SIZE`: ext4 on /dev/zram0, which
# must be unused, reset at the end; needs root), BENCH_IO_SIZE (file size, default 2G), BENCH_IO_QD1_SIZE
# (bytes moved by the QD1 jobs, default 256M: fio's io_size),
# BENCH_IO_ROUNDS (5), BENCH_IO_LATENCY_COST (1), BENCH_IO_JOBS (a
# comma-separated subset of the job names, e.g. "RND4K QD1 read"),
# BENCH_IO_COUNTS (1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export HOSTD=${HOSTD:-$root/hostd/target/release/hostd}
dir=${BENCH_IO_DIR:-/var/tmp}
export BENCH_IO_SIZE=${BENCH_IO_SIZE:-2G}
export BENCH_IO_ROUNDS=${BENCH_IO_ROUNDS:-5}
export BENCH_IO_QD1_SIZE=${BENCH_IO_QD1_SIZE:-256M}
export BENCH_IO_LATENCY_COST=${BENCH_IO_LATENCY_COST:-1}
export BENCH_IO_COUNTS=${BENCH_IO_COUNTS:-1}
command -v fio >/dev/null || { echo "bench-io: fio is not installed (apt-get install fio)" >&2; exit 2; }
[ -x "$HOSTD" ] || { echo "bench-io: $HOSTD not built (just build)" >&2; exit 2; }
if [ "$BENCH_IO_COUNTS" = 1 ]; then
  for t in perf valgrind; do
    command -v $t >/dev/null || { echo "bench-io: $t is not installed (or set BENCH_IO_COUNTS=0)" >&2; exit 2; }
  done
fi
ram_img='' ram_dev='' ram_mnt='' zram_dev=''
cleanup() {
  rm -rf "${work:-}"
  if [ -n "$ram_mnt" ]; then umount "$ram_mnt" && rmdir "$ram_mnt"; fi
  if [ -n "$ram_dev" ]; then losetup -d "$ram_dev"; fi
  if [ -n "$zram_dev" ]; then echo 1 >/sys/block/zram0/reset; fi
  if [ -n "$ram_img" ]; then rm -f "$ram_img"; fi
}
trap cleanup EXIT
if [[ $dir == zram:* ]]; then
  # ext4 on zram: RAM-backed and without a worker thread (the submitting thread copies the
  # data inside its own system call), so no scheduler placement between the two.
  [[ -e /sys/block/zram0/disksize ]] || { echo "bench-io: no /dev/zram0 here" >&2; exit 2; }
  [[ $(cat /sys/block/zram0/disksize) == 0 ]] || { echo "bench-io: /dev/zram0 is in use" >&2; exit 2; }
  echo "${dir#zram:}" >/sys/block/zram0/disksize
  zram_dev=/dev/zram0
  mkfs.ext4 -q -F "$zram_dev"
  ram_mnt=$(mktemp -d /tmp/throttlescope-bench-io-mnt.XXXXXX)
  mount "$zram_dev" "$ram_mnt"
  dir=$ram_mnt
  echo "bench-io: ext4 on $zram_dev (${dir#zram:})" >&2
elif [[ $dir == ram:* ]]; then
  # ext4 on a loop device over RAM: where the engines' own cost is the limit.
  ram_img=$(mktemp -p /dev/shm throttlescope-bench-io.XXXXXX.img)
  truncate -s "${dir#ram:}" "$ram_img"
  ram_dev=$(losetup --find --show "$ram_img")
  mkfs.ext4 -q -F "$ram_dev"
  ram_mnt=$(mktemp -d /tmp/throttlescope-bench-io-mnt.XXXXXX)
  mount "$ram_dev" "$ram_mnt"
  dir=$ram_mnt
  echo "bench-io: ext4 on $ram_dev (loop over $ram_img, ${dir#ram:})" >&2
fi
export BENCH_IO_WHERE="$dir on $(df --output=source "$dir" | tail -n 1) ($(df --output=fstype "$dir" | tail -n 1))"
work=$(mktemp -d -p "$dir" throttlescope-bench-io.XXXXXX)
export BENCH_IO_FILE="$work/bench.dat"
python3 - <<'PY'
import json, os, statistics, subprocess, sys, tempfile

hostd = os.environ["HOSTD"]
f = os.environ["BENCH_IO_FILE"]
fv = f + ".fio-verify"
frw = f + ".randwrite"
size = os.environ["BENCH_IO_SIZE"]
qd1_size = os.environ["BENCH_IO_QD1_SIZE"]
rounds = int(os.environ["BENCH_IO_ROUNDS"])
latency_cost = os.environ.get("BENCH_IO_LATENCY_COST") == "1"
jobs = [  # name, hostd/fio rw, bs, qd
    ("SEQ1M QD8 write", "write", "1M", 8),
    ("SEQ1M QD1 write", "write", "1M", 1),
    ("SEQ1M QD8 read", "read", "1M", 8),
    ("SEQ1M QD1 read", "read", "1M", 1),
    ("RND4K QD64 read", "randread", "4k", 64),
    ("RND4K QD1 read", "randread", "4k", 1),
    ("RND4K QD1 write", "randwrite", "4k", 1),
]
if os.environ.get("BENCH_IO_JOBS"):
    wanted = [w.strip() for w in os.environ["BENCH_IO_JOBS"].split(",")]
    unknown = [w for w in wanted if w not in [j[0] for j in jobs]]
    if unknown:
        sys.exit(f"bench-io: unknown job(s) {unknown}; jobs: {[j[0] for j in jobs]}")
    jobs = [j for j in jobs if j[0] in wanted]
FIO_VERIFY = ["--verify=crc32c", "--verify_interval=4096", "--do_verify=0", "--verify_state_save=0"]
FIO_BEST = {"io_uring": ["--registerfiles=1", "--fixedbufs=1"], "libaio": []}
PCT = [("p50", "50.000000"), ("p90", "90.000000"), ("p99", "99.000000"),
       ("p99.9", "99.900000"), ("p99.99", "99.990000")]

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-io: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    return p.stdout

def io_size(rw, qd):
    return qd1_size if qd == 1 else size

def ios_size(bs, ios):
    # `ios` I/Os of `bs` (4k, 1M) as a size both tools read alike.
    return f"{int(bs[:-1]) * ios}{bs[-1]}"

def target_file(rw):
    return frw if rw == "randwrite" else f

def hostd_cmd(rw, bs, qd, verify, latency="on", file=None, poll=False, ios=None):
    return ([hostd, "bench-job", "--file", file or target_file(rw), "--rw", rw, "--bs", bs,
             "--qd", str(qd), "--size", size,
             "--io-size", ios_size(bs, ios) if ios else io_size(rw, qd),
             "--engine", "io_uring", "--verify", verify, "--latency", latency,
             "--overwrite", "--json"] + (["--poll"] if poll else []))

def hostd_job(rw, bs, qd, verify, latency="on", file=None, poll=False):
    r = json.loads(run(hostd_cmd(rw, bs, qd, verify, latency, file, poll)))
    if r["corrupt_blocks"]:
        sys.exit(f"bench-io: hostd found {r['corrupt_blocks']} corrupt blocks")
    if verify == "on" and "write" not in rw and r["verified_blocks"] * 4096 != r["bytes"]:
        sys.exit("bench-io: hostd did not verify every block it read")
    l = r["latency"]
    lat = {"p50": l["p50_ns"], "p90": l["p90_ns"], "p99": l["p99_ns"], "p99.9": l["p99_9_ns"],
           "p99.99": l["p99_99_ns"], "max": l["max_ns"]} if latency == "on" else None
    if not poll and r["waits"]["spun"]:
        sys.exit(f"bench-io: hostd's default wait spun: {r['waits']}")
    return r["bytes"] / r["seconds"], r["usr_s"] + r["sys_s"], r["bytes"], lat, r["usr_s"], r["sys_s"]

def fio_cmd(rw, bs, qd, engine, verify=False, ios=None):
    fname = frw if rw == "randwrite" else (fv if verify else f)
    cmd = ["fio", "--name=bench", f"--filename={fname}", "--direct=1", f"--ioengine={engine}",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--size={size}",
           f"--io_size={ios_size(bs, ios) if ios else io_size(rw, qd)}",
           "--output-format=json",
           "--percentile_list=50:90:99:99.9:99.99", "--lat_percentiles=1",
           "--clat_percentiles=1"] + FIO_BEST[engine]
    if "write" in rw:
        cmd.append("--end_fsync=1")
    if verify:
        cmd += FIO_VERIFY
    return cmd

def fio_job(rw, bs, qd, engine, verify=False):
    cmd = fio_cmd(rw, bs, qd, engine, verify)
    j = json.loads(run(cmd))["jobs"][0]
    if j["error"]:
        sys.exit(f"bench-io: fio reported error {j['error']} ({' '.join(cmd)})")
    side = j["write"] if "write" in rw else j["read"]
    secs = j["job_runtime"] / 1000.0
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs
    usr, sy = j["usr_cpu"] / 100.0 * secs, j["sys_cpu"] / 100.0 * secs
    lat = {}
    for kind in ("clat", "lat"):
        d = side[kind + "_ns"]
        lat[kind] = {k: d["percentile"][v] for k, v in PCT}
        lat[kind]["max"] = d["max"]
    lat = dict(lat["clat"], total=lat["lat"])
    return side["io_bytes"] / secs, cpu, side["io_bytes"], lat, usr, sy

def size_bytes(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("b").rstrip("i")
    return int(float(t[:-1]) * units[t[-1]]) if t[-1] in units else int(t)

st = os.statvfs(os.path.dirname(f))
need = 3 * size_bytes(size)
if st.f_bavail * st.f_frsize < need + (64 << 20):
    sys.exit(f"bench-io: {os.path.dirname(os.path.dirname(f))} has "
             f"{st.f_bavail * st.f_frsize / 1e9:.2f} GB free; three {size} files need "
             f"{need / 1e9:.2f} GB (set BENCH_IO_SIZE or BENCH_IO_DIR)")

# The I/Os the counts move (two sizes per block size), within the file.
_m = min(1536, size_bytes(size) >> 20) // 3 * 3
COUNT_IOS = {"4k": (8192, 24576), "1M": (_m // 3, _m)}
if os.environ.get("BENCH_IO_COUNTS") == "1" and _m < 192:
    sys.exit(f"bench-io: BENCH_IO_SIZE {size} is under the 192 MiB the counts of the 1M jobs "
             "move (or set BENCH_IO_COUNTS=0)")

results = {}  # (section, job, runner) -> best (rate, cpu per GB)
rates = {}  # (section, job, runner) -> every rate, for the spread
lats = {}  # (section, job, runner) -> every latency dict
verbose = os.environ.get("BENCH_IO_VERBOSE") == "1"

percpu = {}  # (section, job, runner) -> every (usr, sys) CPU seconds per I/O

def keep(section, name, runs):
    # Best of the rounds for each figure: the highest rate and, separately,
    # the lowest CPU per GB (host noise only ever slows a run down).
    bs = next(b for n, _, b, _ in jobs if n == name)
    for who, (rate, cpu, nbytes, lat, usr, sy) in runs:
        ios = nbytes / size_bytes(bs)
        percpu.setdefault((section, name, who), []).append((usr / ios, sy / ios))
        rates.setdefault((section, name, who), []).append(rate)
        if lat:
            lats.setdefault((section, name, who), []).append(lat)
        if verbose:
            p50 = f" p50 {lat['p50'] / 1e3:.1f} us" if lat else ""
            print(f"  {section:<8} {name:<17} {who:<18} {rate / 1e6:8.0f} MB/s "
                  f"{cpu / (nbytes / 1e9):6.3f} cpu s/GB{p50}", file=sys.stderr)
        best = results.setdefault((section, name, who), (0.0, float("inf")))
        results[(section, name, who)] = (max(best[0], rate), min(best[1], cpu / (nbytes / 1e9)))

def rotated(todo, r):
    k = r % len(todo)  # no runner always goes first
    return todo[k:] + todo[:k]

def fio_engines(rw, bs, qd, verify):
    tag = "fio/verified/" if verify else "fio/"
    return [(tag + "io_uring", lambda: fio_job(rw, bs, qd, "io_uring", verify)),
            (tag + "libaio", lambda: fio_job(rw, bs, qd, "libaio", verify))]

# The random-write file exists in full before any random write (as fio lays
# its files out before a job), so no runner pays for allocating blocks.
if any(rw == "randwrite" for _, rw, _, _ in jobs):
    run([hostd, "bench-job", "--file", frw, "--rw", "write", "--bs", "1M", "--qd", "8",
         "--size", size, "--engine", "io_uring", "--overwrite", "--json"])
# F must hold hostd's data and FV fio's before the first read.
if not any(rw == "write" for _, rw, _, _ in jobs):
    hostd_job("write", "1M", 8, "on", file=f)
    fio_job("write", "1M", 8, "libaio", verify=True)

# Three files: F in hostd's format (both tools' plain jobs and hostd's
# verified reads), FV in fio's verify format (fio's verified jobs) and FRW
# for every random write.
for r in range(rounds):
    for name, rw, bs, qd in jobs:
        extra = ([("hostd/no-latency", lambda: hostd_job(rw, bs, qd, "off" if "read" in rw else "on", "off"))]
                 if latency_cost else [])
        # At QD1 hostd also polls (--poll): what that changes, beside the
        # default (asleep, as fio), which is the one compared.
        if qd == 1 and bs == "4k":
            extra.append(("hostd/poll", lambda: hostd_job(rw, bs, qd, "off" if "read" in rw else "on",
                                                         poll=True)))
        if "write" in rw:
            # All writes rotate (hostd's blocks always carry their CRC, so
            # each of its writes counts in both sections); if a fio plain
            # write was the last to write F, an unmeasured hostd write puts
            # hostd's data back for the reads.
            todo = (fio_engines(rw, bs, qd, False) + fio_engines(rw, bs, qd, True) +
                    [("hostd", lambda: hostd_job(rw, bs, qd, "on"))] * 2 + extra)
            runs = []
            for w, fn in rotated(todo, r):
                x = fn()
                runs += [(w, x), ("hostd/verified", x)] if w == "hostd" else [(w, x)]
            last_f = [w for w, _ in runs if "verified" not in w][-1]
            if rw == "write" and not last_f.startswith("hostd"):
                hostd_job("write", "1M", 8, "on", file=f)
        else:
            todo = (fio_engines(rw, bs, qd, False) + fio_engines(rw, bs, qd, True) +
                    [("hostd", lambda: hostd_job(rw, bs, qd, "off")),
                     ("hostd/verified", lambda: hostd_job(rw, bs, qd, "on"))] * 2 + extra)
            runs = [(w, fn()) for w, fn in rotated(todo, r)]
        keep("plain", name, [(w, x) for w, x in runs if "verified" not in w])
        keep("verified", name, [(w.replace("verified/", "").replace("/verified", ""), x)
                                for w, x in runs if "verified" in w])

# Costs per I/O that do not move with the machine's load: each counted over two runs
# of different sizes, the difference divided by the difference in I/Os.
EVENTS = {"raw_syscalls:sys_enter": "syscalls", "io_uring:io_uring_queue_async_work": "io-wq",
          "context-switches": "ctx-sw", "task-clock": "cpu"}

def perf_counts(cmd):
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", ",".join(EVENTS), "--"] + cmd,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-io: perf stat {' '.join(cmd)} failed:\n{p.stderr}")
    out = {}
    for line in p.stderr.splitlines():
        v = line.split(",")
        if len(v) > 2 and v[2] in EVENTS:
            x = float(v[0]) if v[0][:1].isdigit() else float("nan")
            # task-clock comes in ms: CPU time of every thread, user and kernel, to the ns.
            out[EVENTS[v[2]]] = x * 1e3 if v[2] == "task-clock" else x
    return out

def user_instructions(cmd):
    # callgrind counts the instructions run in user space (every process fio forks
    # writes its own file).
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.%p"] + cmd,
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench-io: callgrind {' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
        total = 0
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as fh:
                lines = fh.read().splitlines()
            tot = [l for l in lines if l.startswith("totals:")] or [l for l in lines if l.startswith("summary:")]
            total += int(tot[-1].split()[1])
        return {"instr": float(total)}

def per_io(measure, make_cmd, bs):
    n1, n2 = COUNT_IOS[bs]
    a, b = measure(make_cmd(n1)), measure(make_cmd(n2))
    return {k: (b[k] - a[k]) / (n2 - n1) for k in a}

counts = {}  # (job, runner) -> per-I/O counts
if os.environ.get("BENCH_IO_COUNTS") == "1":
    for name, rw, bs, qd in jobs:
        verify = "on" if "write" in rw else "off"
        makers = [("hostd", lambda n: hostd_cmd(rw, bs, qd, verify, ios=n))]
        if qd == 1 and bs == "4k":
            makers.append(("hostd/poll", lambda n: hostd_cmd(rw, bs, qd, verify, poll=True, ios=n)))
        for e in ("io_uring", "libaio"):
            makers.append((f"fio/{e}", lambda n, e=e: fio_cmd(rw, bs, qd, e, ios=n)))
        for who, make in makers:
            c = per_io(perf_counts, make, bs)
            c.update(per_io(user_instructions, make, bs))
            counts[(name, who)] = c
            if verbose:
                print(f"  counts {name:<17} {who:<14} {c}", file=sys.stderr)

def med_lat(key, kind=None):
    runs = [l[kind] if kind else l for l in lats.get(key, [])]
    cols = ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
    return {k: statistics.median(l[k] for l in runs) for k in cols} if runs else None

print(f"bench-io: {size} files ({qd1_size} moved by QD1 jobs) in {os.environ['BENCH_IO_WHERE']}, "
      f"best of {rounds} rounds; MB/s = 10^6 B/s; cpu = CPU seconds per 10^9 B")
print("bench-io: load average %.2f %.2f %.2f at the end on %d CPUs (other work on the machine "
      "slows the rates and the CPU times, not the counts)" % (os.getloadavg() + (os.cpu_count(),)))
ok = True
lat_rows = []
inline_p50 = []  # jobs whose p50 cannot be compared (see INLINE_NS)
# fio's clat p50 below this: its I/Os completed inside the submitting call.
INLINE_NS = 1000
for section, title in [
        ("plain", "plain jobs (hostd --verify off on reads; its writes carry their block headers)"),
        ("verified", "every 4 KiB block with a CRC-32C, checked on read "
                     "(hostd as `hostd run`; fio --verify=crc32c --verify_interval=4096)")]:
    print(f"-- {title}")
    print(f"{'job':<17} {'hostd MB/s':>10} {'fio MB/s':>9} {'fio engine':>10} {'ratio':>6} "
          f"{'hostd cpu':>9} {'fio cpu':>8} {'spread':>6} {'median':>6}")
    for name, rw, bs, qd in jobs:
        h = results[(section, name, "hostd")]
        fe = max(("fio/io_uring", "fio/libaio"), key=lambda k: results[(section, name, k)][0])
        # Rate: the better engine. CPU: the lowest of both engines' runs, as
        # hostd's is the lowest of its two runs per round.
        fr = (results[(section, name, fe)][0],
              min(results[(section, name, k)][1] for k in ("fio/io_uring", "fio/libaio")))
        ratio = h[0] / fr[0]
        met = ratio >= 0.98 and h[1] <= fr[1]
        hl, fl = med_lat((section, name, "hostd")), med_lat((section, name, fe))
        p50_note = ""
        hp = med_lat((section, name, "hostd/poll"))
        if name.startswith("RND4K QD1") and hl and fl:
            ft = med_lat((section, name, fe), "total")
            if fl["p50"] < INLINE_NS:
                # fio stamps an I/O's issue when its submitting call has
                # returned: a completion already there means the I/O ran
                # inside that call, and both figures are each tool's own time
                # between two clock readings, not the device's.
                inline_p50.append(f"{section} {name}")
                p50_note = (f"  p50 {hl['p50']:.0f} vs {fl['p50']:.0f} ns: completed inside the "
                            "submitting call, not comparable")
            else:
                # hostd waits as fio does: its p50 against fio's clat.
                p50_ok = abs(hl["p50"] - fl["p50"]) <= 0.05 * fl["p50"]
                met &= p50_ok
                p50_note = (f"  p50 {hl['p50'] / fl['p50']:.3f}x fio's clat"
                            + ("" if p50_ok else " (> 5 %)")
                            + (f"; --poll {hp['p50'] / fl['p50']:.3f}x" if hp else ""))
        ok &= met
        iops = "  IOPS %.1fk vs %.1fk" % (h[0] / 4096 / 1e3, fr[0] / 4096 / 1e3) if bs == "4k" else ""
        runs = rates[(section, name, fe)]
        spread = (max(runs) - min(runs)) / max(runs)
        fio_all = rates[(section, name, "fio/io_uring")] + rates[(section, name, "fio/libaio")]
        median = statistics.median(rates[(section, name, "hostd")]) / statistics.median(fio_all)
        print(f"{name:<17} {h[0]/1e6:>10.0f} {fr[0]/1e6:>9.0f} {fe[4:]:>10} {ratio:>6.3f} "
              f"{h[1]:>9.3f} {fr[1]:>8.3f} {spread:>6.0%} {median:>6.3f}  "
              f"{'ok' if met else 'MISSED'}{iops}{p50_note}")
        if hl and fl:
            lat_rows.append((section, name, fe[4:], hl, hp, fl, med_lat((section, name, fe), "total")))
print("spread = (slowest - fastest) / fastest of the reference fio engine's runs: how much the\n"
      "disk itself varied; a ratio inside it cannot tell the engines apart. median = median of\n"
      "hostd's runs / median of both fio engines' runs, less swayed by one lucky run than the\n"
      "best-of ratio the target uses (BENCH_IO_VERBOSE=1 prints every run)")
print("-- latency in µs, median over the rounds: hostd (waiting asleep, as fio and `hostd run`\n"
      "   do by default), hostd --poll (RND4K QD1) and fio's clat (all from the\n"
      "   I/O's issue, when its submitting call had returned, to its completion), and fio's\n"
      "   lat (slat + clat: the time the application waited) of the reference engine")
cols = ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
print(f"{'section':<8} {'job':<17} {'who':<16} " + " ".join(f"{c:>9}" for c in cols))
for section, name, fe, hl, hp, fl, ft in lat_rows:
    for who, l in (("hostd", hl), ("hostd --poll", hp), (f"fio clat {fe}", fl), (f"fio lat {fe}", ft)):
        if l is None:
            continue
        print(f"{section:<8} {name:<17} {who:<16} " +
              " ".join(f"{l[c] / 1e3:>9.{2 if l[c] < 10_000 else 1}f}" for c in cols))
def spread(vals):
    return f"{statistics.median(vals):6.2f} [{min(vals):.2f}-{max(vals):.2f}]"

print("-- cost per I/O, plain jobs: usr and sys = CPU µs per I/O, median [range] over the rounds;\n"
      "   instr = user-space instructions (callgrind), syscalls, io-wq = requests io_uring\n"
      "   punted to its worker threads, ctx-sw = context switches (perf stat), each per I/O as\n"
      "   the difference of two runs (%s I/Os), and cpu = CPU µs per I/O of those runs\n"
      "   (perf's task-clock: user and kernel, to the ns; usr and sys come from getrusage, whose\n"
      "   ticks make a short job's figures coarse); * = fio's reference engine (best rate).\n"
      "   1M jobs: their few hundred I/Os do little in user space, and the tools' timer threads\n"
      "   vary more than that from run to run, so their instr may even come out negative"
      % ", ".join(f"{b}: {a[0]} and {a[1]}" for b, a in COUNT_IOS.items()))
print(f"{'job':<17} {'who':<14} {'usr µs [range]':>22} {'sys µs [range]':>22} {'instr':>8} "
      f"{'syscalls':>8} {'io-wq':>6} {'ctx-sw':>6} {'cpu µs':>7}")
for name, rw, bs, qd in jobs:
    fe = max(("fio/io_uring", "fio/libaio"), key=lambda k: results[("plain", name, k)][0])
    for who in ("hostd", "hostd/poll", "fio/io_uring", "fio/libaio"):
        pc = percpu.get(("plain", name, who))
        if not pc:
            continue
        c = counts.get((name, who))
        cols = (f"{c['instr']:>8.0f} {c['syscalls']:>8.2f} {c['io-wq']:>6.2f} {c['ctx-sw']:>6.2f} "
                f"{c['cpu']:>7.2f}" if c else "")
        print(f"{name:<17} {who + ('*' if who == fe else ''):<14} "
              f"{spread([u * 1e6 for u, _ in pc]):>22} {spread([y * 1e6 for _, y in pc]):>22} {cols}")
if latency_cost:
    print("-- cost of timing every I/O: hostd with latency recording / without (plain jobs; "
          "best rate, lowest cpu)")
    for name, rw, bs, qd in jobs:
        on, off = results[("plain", name, "hostd")], results[("plain", name, "hostd/no-latency")]
        print(f"{name:<17} rate {on[0] / off[0]:.3f}x  cpu {on[1]:.3f} vs {off[1]:.3f} s/GB "
              f"({(on[1] - off[1]) / off[1]:+.1%})")
print("targets (every ratio >= 0.98, hostd cpu <= fio cpu, RND4K QD1 p50 within 5 %): " +
      ("met" if ok else "NOT met") +
      (f" (p50 not judged for {', '.join(inline_p50)}: completed inside the submitting call)"
       if inline_p50 else ""))
sys.exit(0)
PY
