#!/usr/bin/env python3
"""A run directory of N file records (default 100 000) for measuring `hostd analyze` and
report.html on many files: files.csv, intervals.csv, counters.csv, latency-files.hlog and a
manifest, made from a real run directory TEMPLATE (its manifest and its latency log's
histograms, reused round robin). One target, back-to-back write/read cycles of 125 files of
8-32 MB, the writes slowing to a third after the first 30 % of each cycle (an SLC cache).
No probe.

Usage: gen-many-files-run.py TEMPLATE_RUN_DIR OUT_DIR [FILES]
"""
import json
import os
import random
import sys

tmpl, out = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
os.makedirs(out, exist_ok=False)
rng = random.Random(4)

m = json.load(open(os.path.join(tmpl, "manifest.json")))
label = "/mnt/ssd"
t0 = m["start_ns"]
m["targets"] = m["targets"][:1]
m["targets"][0].update(label=label, path=label, test_dir=label + "/throttlescope-" + m["run_id"])
m["extra"] = {}
json.dump(m, open(os.path.join(out, "manifest.json"), "w"), indent=2)

hists = [l.split(",", 4)[4] for l in open(os.path.join(tmpl, "latency-files.hlog")) if l.startswith("Tag=")]
header = open(os.path.join(tmpl, "latency-files.hlog")).read().split("Tag=", 1)[0]

files = open(os.path.join(out, "files.csv"), "w")
files.write("target,phase,index,start_ns,end_ns,bytes,mbps,verified,corrupt_blocks,corrupt_bytes,late_ops,"
            "direct_io,status,first_corrupt_offset,block_size,queue_depth,lat_io_count,lat_min_ns,lat_mean_ns,"
            "lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p99_9_ns,lat_p99_99_ns,lat_max_ns\n")
lat = open(os.path.join(out, "latency-files.hlog"), "w")
lat.write(header)
per_cycle = 125
sizes = [rng.randrange(8_000_000, 32_000_000) // 4096 * 4096 for _ in range(per_cycle)]
t = t0
moved = {}  # 100 ms bucket -> bytes finished there
for k in range(n):
    cycle, pos = divmod(k, 2 * per_cycle)
    phase = "write" if pos < per_cycle else "read"
    index = pos % per_cycle
    size = sizes[index]
    fast = phase == "read" or index < 0.3 * per_cycle
    secs = size / ((2.0e9 if fast else 0.7e9) * rng.uniform(0.9, 1.1))
    start, end = int(t), int(t + secs * 1e9)
    ios = size // 1048576 + 1
    p50 = int(secs / ios * 8e9)
    files.write(f"{label},{phase},{index},{start},{end},{size},{size / 1e6 / secs:.3f},"
                f"{'true' if phase == 'read' else ''},0,0,0,true,ok,,1048576,8,{ios},{p50 // 3},{p50},{p50},"
                f"{p50 * 2},{p50 * 3},{p50 * 3},{p50 * 3},{p50 * 3}\n")
    ms = (start - t0) // 1_000_000
    lms = (end - start) // 1_000_000
    lat.write(f"Tag=file/0/{phase}/{index},{ms // 1000}.{ms % 1000:03},{lms // 1000}.{lms % 1000:03},"
              f"{p50 * 3 / 1e6:.3f},{hists[k % len(hists)]}")
    t = end + 1_000_000
    buckets = (start - t0) // 10**8
    moved[buckets] = moved.get(buckets, 0) + size

ivs = open(os.path.join(out, "intervals.csv"), "w")
ivs.write("target,start_ns,end_ns,bytes,mbps,phase\n")
cnt = open(os.path.join(out, "counters.csv"), "w")
cnt.write("target,time_ns,bytes\n")
total = 0
last = max(moved) + 1
for s in range(0, last, 10):
    b = sum(moved.get(j, 0) for j in range(s, s + 10))
    ivs.write(f"{label},{t0 + s * 10**8},{t0 + (s + 10) * 10**8},{b},{b / 1e6:.3f},write\n")
    for j in range(s, s + 10):
        total += moved.get(j, 0)
        cnt.write(f"{label},{t0 + j * 10**8},{total}\n")
print(f"{out}: {n} files over {(t - t0) / 3600e9:.2f} h")
