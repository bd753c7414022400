#!/usr/bin/env bash
# A real `hostd run` of a duration profile of small files (8-32 MB, write then read back and
# verify, deleted after each cycle) on a real disk, its resident set sampled every
# BENCH_LONG_SAMPLE_S seconds (10). Prints the slope of the resident set after the first
# minute (least squares, KB/s; target < 1 KB/s) and of its anonymous part (RssAnon: the heap,
# without the program's file pages that come in as new code runs), the files done, the
# resident set per file over the same stretch and the run directory's bytes.
#
# Two runs: with the simulated probe at 1 kHz (`--probe sim`), then without a probe, so
# that the file side's slope shows apart from the probe's samples.
#
# Usage: bench-long-run.sh HOSTD [MINUTES]   (BENCH_LONG_PROBE=sim|none|both, default both;
# BENCH_LONG_RSS_OUT=DIR keeps the resident-set samples there as rss-PROBE.txt)
# The target is a 3 GB ext4 file system on a loop device over a file in BENCH_LONG_DIR
# (/var/tmp: on disk; tmpfs has no direct I/O), so a cycle fills 90 % of 3 GB and not of
# the machine's disk. Needs root (losetup, mount); everything is removed at the end.
set -euo pipefail

hostd=${1:?usage: bench-long-run.sh HOSTD [MINUTES]}
minutes=${2:-10}
every=${BENCH_LONG_SAMPLE_S:-10}
which=${BENCH_LONG_PROBE:-both}
base=${BENCH_LONG_DIR:-/var/tmp}

work=$(mktemp -d -p "$base" throttlescope-bench-long.XXXXXX)
mnt="$work/mnt"
cleanup() {
    if mountpoint -q "$mnt"; then umount "$mnt"; fi
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 3G "$work/disk.img"
mkfs.ext4 -q -F "$work/disk.img"
mkdir -p "$mnt"
mount -o loop "$work/disk.img" "$mnt"

cat >"$work/small.toml" <<EOF
name = "bench-long"
description = "small files for ${minutes} minutes: write, read back and verify, delete"
kind = "files"

[files]
duration = "${minutes}m"
min_size = 8000000
max_size = 32000000

[io]
block_size = 1048576
queue_depth = 8
phases = ["write", "read"]
verify = true
EOF

# One run: RSS every $every s into $work/rss-$1.txt ("seconds kB files"), then the figures.
one() {
    local probe=$1 run="$work/run-$1" log="$work/rss-$1.txt"
    mkdir -p "$mnt/t-$probe"
    "$hostd" run -q --profile "$work/small.toml" --probe "$probe" \
        --target "$mnt/t-$probe" --out "$run" >"$work/out-$probe.txt" 2>&1 &
    local pid=$! t0
    t0=$(date +%s)
    : >"$log"
    while kill -0 "$pid" 2>/dev/null; do
        local rss anon files
        rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        anon=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        files=$(($( (wc -l <"$run/files.csv") 2>/dev/null || echo 1) - 1))
        [ -n "$rss" ] && echo "$(($(date +%s) - t0)) $rss $files ${anon:-0}" >>"$log"
        sleep "$every"
    done
    wait "$pid" || { cat "$work/out-$probe.txt"; echo "bench-long-run: hostd run failed"; return 1; }
    # Least-squares slope of RSS (kB) against time from the first minute to the end of
    # the workload (MINUTES after the start: the samples after it fall in the read-back and
    # analysis at the run's end, reported apart as the peak), and per file.
    awk -v probe="$probe" -v until=$((minutes * 60)) '
        { if ($2 > peak) peak = $2 }
        $1 >= 60 && $1 <= until { n++; sx += $1; sy += $2; sxx += $1*$1; sxy += $1*$2; sf += $3; sff += $3*$3; sfy += $3*$2; sa += $4; sxa += $1*$4;
                   if (!first) { first = $2; f0 = $3 }; last = $2; f1 = $3 }
        END {
            if (n < 3) { print "bench-long-run: too few samples after the first minute"; exit 1 }
            slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
            anon = (n*sxa - sx*sa) / (n*sxx - sx*sx)
            per_file = (n*sff - sf*sf) > 0 ? (n*sfy - sf*sy) / (n*sff - sf*sf) * 1024 : 0
            printf "bench-long-run: probe %s: RSS %d kB at 60 s, %d kB at the workload'"'"'s last sample; slope from the first minute to the workload'"'"'s end %.2f KB/s (target < 1 KB/s), of its anonymous memory (the heap; the rest is the program'"'"'s own pages as it runs new code) %.2f KB/s; %.0f B per file over %d files; peak %d kB (the end'"'"'s read-back and analysis included)\n",
                probe, first, last, slope * 1.024, anon * 1.024, per_file, f1 - f0, peak
        }' "$log"
    if [ -n "${BENCH_LONG_RSS_OUT:-}" ]; then cp "$log" "$BENCH_LONG_RSS_OUT/rss-$probe.txt"; fi
    echo "bench-long-run: probe $probe: run directory $(du -sb "$run" | cut -f1) bytes ($(ls "$run" | tr '\n' ' '))"
}

case $which in
both) one sim; one none ;;
sim | none) one "$which" ;;
*) echo "BENCH_LONG_PROBE must be sim, none or both" >&2; exit 2 ;;
esac
