#!/usr/bin/env bash
# Runs the hostd workspace's tests as `cargo test --locked --workspace [-- ARGS]` does, but
# with several test binaries at once: cargo runs them one after another, and most of their
# time is spent waiting (a probe simulator on a pty, a private influxd, loop devices behind a
# slowed blkio controller), not computing. Each binary runs in its package's directory, as
# cargo runs it; its output is printed when it ends, whole, with its time. The doc tests run
# last, through cargo. The slowest binaries of the previous run start first (their times are
# kept in target/test-times.tsv). Binaries that time a real device or compare timings with
# wall time run one at a time after the others (`alone` below): other tests' disk and CPU
# load would change what they measure.
#
# Usage: test-parallel.sh [-- TEST-ARGS...]    (from anywhere; TEST_JOBS=N, default 4;
#        TEST_QUICK=1: only the crates' unit tests (lib and bin targets) and the integration
#        tests listed in `quick` below, for `just test-quick`)
# Exit status: 0 when every binary and the doc tests passed, 1 otherwise.
set -euo pipefail

hostd_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../hostd" && pwd)"
[[ ${1:-} == -- ]] && shift
test_args=("$@")
jobs="${TEST_JOBS:-4}"
cd "$hostd_dir"
times="$hostd_dir/target/test-times.tsv"
work=$(mktemp -d -t throttlescope-tests.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Build everything `cargo test --workspace` builds, and list its test executables.
cargo test --locked --workspace --no-run --message-format=json-render-diagnostics >"$work/build.json"
python3 - "$work/build.json" "$times" >"$work/list.tsv" <<'EOF'
import json, os, sys
build, times = sys.argv[1], sys.argv[2]
last = {}
if os.path.exists(times):
    for line in open(times):
        name, _, secs = line.rstrip("\n").partition("\t")
        try:
            last[name] = float(secs)
        except ValueError:
            pass
rows = []
for line in open(build):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    pkg_dir = os.path.dirname(m["manifest_path"])
    kind = m["target"]["kind"][0]
    name = f'{os.path.basename(pkg_dir)}/{kind}/{m["target"]["name"]}'
    rows.append((last.get(name, 1e9), name, pkg_dir, m["executable"]))
# Longest first; unknown ones (new binaries) before everything.
for secs, name, pkg_dir, exe in sorted(rows, key=lambda r: -r[0]):
    print(f"{name}\t{pkg_dir}\t{exe}")
EOF

run_one() { # name pkg_dir exe
    local name=$1 dir=$2 exe=$3 log="$work/${1//\//_}.log" t0 rc=0
    t0=$(date +%s%N)
    (cd "$dir" && "$exe" "${test_args[@]}") >"$log" 2>&1 || rc=$?
    local ms=$((($(date +%s%N) - t0) / 1000000))
    printf '%s\t%d.%03d\n' "$name" $((ms / 1000)) $((ms % 1000)) >>"$work/times.tsv"
    { # one block per binary, printed whole (flock) so that parallel ones do not interleave
        flock 8
        if ((rc == 0)); then
            printf '    ok %-40s %6d.%01d s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100))
        else
            printf '\n---- FAILED %s (exit %d, %d.%01d s) ----\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100))
            cat "$log"
            printf -- '---- end of %s ----\n\n' "$name"
            touch "$work/failed"
        fi
    } 8>>"$work/print.lock"
}

# real_device, real_matrix, real_profiles, fill_states_realdev, certify_faults: loop devices whose rate the blkio controller
#   sets; with other tests writing to the same disk, "wandering by 12 %" measured 19 % once.
# scenario_pipeline: simulated drives with the probe simulator, which plays in host time;
#   under parallel CPU load its p50-stalls runs showed no stall at all once.
# sim_timeline: busies every core on purpose (a simulated drive's records must not change).
# latency: at QD1 the I/Os' latencies must fill most of the job's wall time.
# probe_run: its unplug test reopens the probe's pty; under parallel load it was once refused
#   ("Unable to acquire exclusive lock"), not reproduced in six runs beside other pty tests.
alone=(hostd/test/real_device hostd/test/real_matrix hostd/test/real_hub hostd/test/real_profiles hostd/test/fill_states_realdev hostd/test/real_steady hostd/test/certify_faults
    hostd/test/scenario_pipeline hostd/test/sim_timeline workload/test/latency hostd/test/probe_run)
is_alone() { local a; for a in "${alone[@]}"; do [[ $1 == "$a" ]] && return 0; done; return 1; }
# `just test-quick`: integration tests that run in seconds and need no real device, browser,
# influxd or Wine (the unit tests of every crate run too).
quick=(hostd/test/architecture_map hostd/test/analyze_cli hostd/test/compare_cli
    hostd/test/one_definition report/test/one_value
    probe/test/vectors probe/test/corruption probe/test/port_versions records/test/exact_bytes
    scenario/test/port scenario/test/drive_log scenario/test/probe_store oslog/test/fixtures
    influx/test/point_bytes)
is_quick() {
    [[ ${TEST_QUICK:-0} == 1 ]] || return 0
    [[ $1 == influx/lib/* ]] && return 1 # its writer tests start a private influxd
    [[ $1 == */lib/* || $1 == */bin/* ]] && return 0
    local a; for a in "${quick[@]}"; do [[ $1 == "$a" ]] && return 0; done; return 1
}

echo "test-parallel: $(wc -l <"$work/list.tsv") test binaries, $jobs at a time (then ${alone[*]} alone)"
t_start=$(date +%s)
grep_quick() { while IFS=$'\t' read -r name dir exe; do is_quick "$name" && printf '%s\t%s\t%s\n' "$name" "$dir" "$exe"; done; }
grep_quick <"$work/list.tsv" >"$work/run.tsv"
mv "$work/run.tsv" "$work/list.tsv"
while IFS=$'\t' read -r name dir exe; do
    is_alone "$name" && continue
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    run_one "$name" "$dir" "$exe" &
done <"$work/list.tsv"
wait
while IFS=$'\t' read -r name dir exe; do
    is_alone "$name" && run_one "$name" "$dir" "$exe"
done <"$work/list.tsv"
echo "test-parallel: binaries done in $(($(date +%s) - t_start)) s"
sort -t$'\t' -k2,2 -rn "$work/times.tsv" >"$times"

doc_rc=0
cargo test --locked --workspace --doc -- "${test_args[@]}" || doc_rc=$?
# One total over every binary (their own "test result:" lines), as one plain closing line.
cat "$work"/*.log | awk '/^test result:/ { for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i; if ($(i + 1) ~ /^failed/) f += $i; if ($(i + 1) ~ /^ignored/) s += $i } }
    END { printf "test binaries: %d passed, %d failed, %d skipped\n", p, f, s }'
if [[ -e $work/failed ]]; then
    echo "test-parallel: FAILED: test binaries (their output is above)" >&2
    exit 1
fi
if ((doc_rc != 0)); then
    echo "test-parallel: FAILED: doc tests" >&2
    exit 1
fi
echo "test-parallel: all passed in $(($(date +%s) - t_start)) s"
