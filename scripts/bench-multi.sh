#!/usr/bin/env bash
# Several targets at once, as a hub run drives them: N targets (default 4), each a
# fresh ext4 on its own RAM-backed loop device, against fio with N jobs (one per
# device) in one group. Each side writes one file per target, then reads it back
# (SEQ1M QD8 by default); the figure is the read phase: each target's own rate and the
# aggregate, the sum of those rates, in alternating rounds. (Not bytes over the span from
# the first read's start to the last one's end: hostd's targets each read as soon as their
# own write is done, so their reads start apart, while fio's read group starts together.)
# Targets: aggregate >= 0.98 of fio's and no target starved (slowest / fastest target, for
# both tools).
#
# Each target's loop device has a kernel worker of its own and each of hostd's targets a
# thread (fio: a process per job): the figures mean something only where the machine has
# a CPU for each of them; with fewer CPUs than 2 N the script still runs, and says so.
#
# Needs root (losetup, mkfs.ext4, mount). Environment: HOSTD (binary), BENCH_MULTI_TARGETS
# (4), BENCH_MULTI_SIZE (file per target, 256M), BENCH_MULTI_BS (1M), BENCH_MULTI_QD (8),
# BENCH_MULTI_ROUNDS (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export HOSTD=${HOSTD:-$root/hostd/target/release/hostd}
n=${BENCH_MULTI_TARGETS:-4}
export BENCH_MULTI_SIZE=${BENCH_MULTI_SIZE:-256M} BENCH_MULTI_BS=${BENCH_MULTI_BS:-1M}
export BENCH_MULTI_QD=${BENCH_MULTI_QD:-8} BENCH_MULTI_ROUNDS=${BENCH_MULTI_ROUNDS:-3}
command -v fio >/dev/null || { echo "bench-multi: fio is not installed" >&2; exit 2; }
[ -x "$HOSTD" ] || { echo "bench-multi: $HOSTD not built (just build)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-multi: needs root (loop devices)" >&2; exit 2; }
work=$(mktemp -d /tmp/throttlescope-bench-multi.XXXXXX)
imgs=() devs=() mnts=()
cleanup() {
  for m in "${mnts[@]}"; do umount "$m" || true; done
  for d in "${devs[@]}"; do losetup -d "$d" || true; done
  for i in "${imgs[@]}"; do rm -f "$i"; done
  rm -rf "$work"
}
trap cleanup EXIT
# Room for the file (one tool's at a time), ext4's own and hostd's headroom.
img_mb=$(python3 -c "import sys; s=sys.argv[1].upper(); u={'K':1/1024,'M':1,'G':1024}; print(int(float(s[:-1])*u[s[-1]]*1.5)+64)" "$BENCH_MULTI_SIZE")
for i in $(seq 1 "$n"); do
  img=$(mktemp -p /dev/shm throttlescope-bench-multi.XXXXXX.img)
  imgs+=("$img")
  truncate -s "${img_mb}M" "$img"
  dev=$(losetup --find --show "$img")
  devs+=("$dev")
  mkfs.ext4 -q -F "$dev"
  mkdir -p "$work/t$i"
  mount "$dev" "$work/t$i"
  mnts+=("$work/t$i")
done
export BENCH_MULTI_DIRS="${mnts[*]}" BENCH_MULTI_WORK=$work
python3 - <<'PY'
import json, os, statistics, subprocess, sys

hostd = os.environ["HOSTD"]
dirs = os.environ["BENCH_MULTI_DIRS"].split()
work = os.environ["BENCH_MULTI_WORK"]
size, bs, qd = os.environ["BENCH_MULTI_SIZE"], os.environ["BENCH_MULTI_BS"], int(os.environ["BENCH_MULTI_QD"])
rounds = int(os.environ["BENCH_MULTI_ROUNDS"])
n = len(dirs)

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-multi: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    return p.stdout

def mb(text):  # 256M -> "256MiB" for hostd's profile
    return text[:-1] + {"k": "KiB", "K": "KiB", "M": "MiB", "G": "GiB"}[text[-1]]

profile = os.path.join(work, "multi.toml")
with open(profile, "w") as fh:
    fh.write(f'name = "multi"\ndescription = "bench-multi"\nkind = "files"\n[files]\ncount = 1\n'
             f'min_size = "{mb(size)}"\nmax_size = "{mb(size)}"\n[io]\nblock_size = "{mb(bs)}"\n'
             f'queue_depth = {qd}\nphases = ["write", "read"]\nverify = false\n')

def hostd_round(r):
    out = os.path.join(work, f"run{r}")
    cmd = [hostd, "run", "-q", "--profile", profile, "--out", out, "--seed", str(r + 1)]
    for d in dirs:
        cmd += ["--target", d]
    run(cmd)
    with open(os.path.join(out, "summary.json")) as fh:
        s = json.load(fh)
    reads = [p for p in s["phases"] if p["phase"] == "read"]
    if len(reads) != n:
        sys.exit(f"bench-multi: hostd's summary has {len(reads)} read phases, not {n}")
    per = [p["bytes"] / p["seconds"] for p in reads]
    return sum(per), per

def fio_round(r):
    files = [os.path.join(d, "fio.dat") for d in dirs]
    common = ["--direct=1", "--ioengine=io_uring", "--registerfiles=1", "--fixedbufs=1",
              f"--bs={bs}", f"--iodepth={qd}", f"--size={size}", "--output-format=json"]
    jobs = []
    for i, f in enumerate(files):
        jobs += [f"--name=t{i}", f"--filename={f}"]
    run(["fio", "--rw=write", "--end_fsync=1"] + common + jobs)
    j = json.loads(run(["fio", "--rw=read"] + common + jobs))
    per = [job["read"]["io_bytes"] / (job["job_runtime"] / 1000.0) for job in j["jobs"]]
    for f in files:
        os.remove(f)
    os.sync()  # ext4 frees the blocks when its journal commits: now, before hostd's check
    return sum(per), per

res = {"hostd": [], "fio": []}
for r in range(rounds):
    order = [("hostd", hostd_round), ("fio", fio_round)]
    if r % 2:
        order.reverse()
    for who, fn in order:
        res[who].append(fn(r))
load = os.getloadavg()
print(f"bench-multi: {n} targets (ext4 on RAM-backed loop devices), {size} per target, read "
      f"bs {bs} QD{qd}, {rounds} alternating rounds; {os.cpu_count()} CPUs, load average "
      f"{load[0]:.2f} at the end")
print(f"{'round':>5} {'hostd MB/s':>10} {'fio MB/s':>9} {'ratio':>6} {'hostd min/max':>13} {'fio min/max':>11}  per target hostd | fio (MB/s)")
ratios = []
for r in range(rounds):
    (ha, hp), (fa, fp) = res["hostd"][r], res["fio"][r]
    ratios.append(ha / fa)
    print(f"{r + 1:>5} {ha / 1e6:>10.0f} {fa / 1e6:>9.0f} {ha / fa:>6.3f} {min(hp) / max(hp):>13.2f} "
          f"{min(fp) / max(fp):>11.2f}  {' '.join(f'{x / 1e6:.0f}' for x in hp)} | "
          f"{' '.join(f'{x / 1e6:.0f}' for x in fp)}")
print(f"aggregate ratio hostd/fio: median {statistics.median(ratios):.3f} "
      f"[{min(ratios):.3f}-{max(ratios):.3f}] (target >= 0.98)")
if (os.cpu_count() or 1) < 2 * n:
    print(f"NOTE: {os.cpu_count()} CPUs for {n} targets, each with a loop worker and an I/O "
          "thread: the targets share CPUs, so these figures say how the two tools share a "
          "too-small machine, not whether hostd keeps up with fio where each target has a CPU.")
PY
