# throttlescope everyday commands. `just --list` shows them all.

set shell := ["bash", "-euo", "pipefail", "-c"]

root := justfile_directory()
fw_build := root / "build/firmware"
hostd := root / "hostd/target/release/hostd"

# The probe simulator that `hostd --probe sim` starts.
export THROTTLESCOPE_PROBE_SIM := fw_build / "sim/throttlescope-probe-sim"

# List the recipes.
default:
    @just --list

# Install the system packages that are missing (idempotent).
setup for="test":
    @{{root}}/scripts/setup.sh {{for}}

# Build hostd (release) and the probe simulator.
build: (setup "demo") firmware-build
    cd {{root}}/hostd && cargo build --locked --release -p hostd

# Two runs: the quick profile on this machine's disk (real direct I/O, simulated probe), then a
# simulated drive that throttles (the gradual-thermal Samsung X5 scenario played 5x faster, with
# the probe simulator on the same heat model): an attributed thermal event, its evidence and the
# report's event markers, in about 40 s, in the modelled drive's own rates and times. Both in a
# temporary directory.
demo: build
    #!/usr/bin/env bash
    set -euo pipefail
    work=$(mktemp -d -p /var/tmp throttlescope-demo.XXXXXX)  # /var/tmp: on disk (tmpfs has no direct I/O)
    mkdir -p "$work/target"
    echo "== 1/2: the quick profile on this machine's disk ($work/target)"
    {{hostd}} run --profile quick --probe sim --target "$work/target" --out "$work/real"
    echo
    echo "== 2/2: a simulated drive that throttles: 100 GB to sim:x5-gradual, played 5x faster (~40 s; rates and times are the modelled drive's)"
    {{hostd}} run --quiet --profile sustained-100GB --seed 1 --probe sim --target 'sim:x5-gradual*5:write' --out "$work/throttling"
    echo
    echo "demo results: $work/real (this disk), $work/throttling (simulated drive; open report.html for the event and its evidence)"

# The steps share one build: every cargo step below uses the dev profile and the workspace's
# test feature set, so nothing is compiled twice. influxd's cold build (Go and Flux, minutes,
# often on one core) starts first in the background and runs beside the firmware and Rust
# builds; the InfluxDB tests wait for it (scripts/build-influxd.sh's lock). docs/benchmarks.md
# "CI time" has the figures.
# Each recipe in turn, past a failure, then a table of recipe, seconds and tests
# (scripts/test-all.sh).
# The whole test suite (what CI runs).
test: setup influx-build-background
    {{root}}/scripts/test-all.sh test-firmware check-macos lint-deps test-hostd test-dashboards test-report test-windows

# The firmware core's tests and every crate's unit tests plus the integration tests that need
# no real device, browser, influxd or Wine (the list in scripts/test-parallel.sh). Not a
# substitute for `just test`.
# The edit loop: the fast tests, warm in under a minute.
test-quick: firmware-build
    ctest --test-dir {{fw_build}} --output-on-failure --progress | tail -3
    TEST_QUICK=1 {{root}}/scripts/test-parallel.sh

# Unused dependencies in the hostd workspace (cargo-machete, installed once with cargo).
lint-deps:
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-machete >/dev/null || cargo install --locked --quiet cargo-machete
    cd {{root}}/hostd && cargo machete

# `just test` plays two; the offline truth test holds the analysis to ten.
# Every scenario through the real-time pipeline with ten profile seeds (about 7 minutes).
test-pipeline: firmware-build
    cd {{root}}/hostd && THROTTLESCOPE_PIPELINE_SEEDS=10 cargo test --locked -p hostd --test scenario_pipeline

# Start `influx-build` in the background; a built influxd is reused at once (log: influxd/build.log in the cache).
influx-build-background:
    #!/usr/bin/env bash
    set -euo pipefail
    log="${THROTTLESCOPE_CACHE:-$HOME/.cache/throttlescope}/influxd/build.log"
    mkdir -p "$(dirname "$log")"
    nohup setsid {{root}}/scripts/build-influxd.sh >"$log" 2>&1 </dev/null &
    echo "influx-build: started in the background, pid $! (a built influxd is reused at once; log $log)"

# Checked from Linux with no Apple SDK (docs/platforms.md); setup adds the two rustup targets.
# hostd on both Apple targets (aarch64, x86_64): clippy -D warnings on the library, binaries and tests.
check-macos: (setup "macos")
    cd {{root}}/hostd && cargo clippy --locked --workspace --all-targets --target aarch64-apple-darwin --target x86_64-apple-darwin -- -D warnings

# Configure and build the firmware core, its host tests and the probe simulator.
firmware-build:
    cmake -S {{root}}/firmware -B {{fw_build}} -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build {{fw_build}}

# Firmware core host tests (ctest) and the freestanding Cortex-M0+ compile.
test-firmware: firmware-build
    ctest --test-dir {{fw_build}} --output-on-failure
    @cat {{fw_build}}/freestanding/size.txt

# Not part of `just test`: needs west and `west init -l firmware && west update` once.
# Build the Zephyr probe firmware for BOARD (rpi_pico, native_sim) into build/zephyr/BOARD.
firmware-zephyr BOARD="rpi_pico" *CMAKE_ARGS="":
    {{root}}/firmware/scripts/zephyr-build.sh {{BOARD}} {{CMAKE_ARGS}}

# Needs west, a west workspace and the Zephyr SDK or gcc-arm-none-eabi (docs/firmware.md).
# Build the probe firmware for the Raspberry Pi Pico and flash it (UF2 in BOOTSEL mode, or west flash).
flash:
    {{root}}/firmware/scripts/zephyr-build.sh --flash rpi_pico

# Firmware core: host encode cost per sample and frame bytes per sample at the default batch.
bench-firmware: firmware-build
    {{fw_build}}/bench/bench-firmware-encode

# hostd vs fio at its best on one file (SEQ1M QD8/QD1 write and read, RND4K QD64 read, RND4K QD1 read and write): ratios, CPU s/GB, latency percentiles; BENCH_IO_DIR picks the disk (ram:SIZE a loop device in RAM, zram:SIZE /dev/zram0).
bench-io: setup
    cd {{root}}/hostd && cargo build --locked --release -p hostd
    {{root}}/scripts/bench-io.sh

# Where each QD1 random read's time goes, hostd against fio, from the kernel's scheduler tracepoints (perf, root; ROUNDS alternated runs on a loop device in RAM).
bench-qd1-trace rounds="4":
    cd {{root}}/hostd && cargo build --locked --release -p hostd
    QD1_TRACE_ROUNDS={{rounds}} {{root}}/scripts/qd1-trace.sh 32M

# Test binaries run several at a time (scripts/test-parallel.sh); influxd is awaited only after
# the build, so a background influx-build overlaps it.
# hostd: formatting, lints and the Rust tests (InfluxDB tests start a private influxd).
test-hostd: firmware-build
    cd {{root}}/hostd && cargo fmt --all --check
    cd {{root}}/hostd && cargo clippy --locked --workspace --all-targets -- -D warnings
    cd {{root}}/hostd && cargo test --locked --workspace --no-run --quiet
    @{{root}}/scripts/build-influxd.sh >/dev/null
    {{root}}/scripts/test-parallel.sh

# hostd for Windows: built with MinGW-w64 (x86_64-pc-windows-gnu), its unit tests under Wine,
# then `hostd.exe run --profile quick` under Wine with the probe simulator on a COM port, whose run
# directory the Linux `hostd analyze` must read to the same figures (scripts/windows/test.sh).
test-windows: setup firmware-build
    {{root}}/scripts/windows/test.sh

# Grafana dashboards: type check against @grafana/schema, structural checks, and every query
# run against a private influxd holding a real `hostd run --probe sim` (docs/dashboards.md).
test-dashboards: firmware-build influx-build
    #!/usr/bin/env bash
    set -euo pipefail
    command -v npm >/dev/null || { echo "test-dashboards: Node.js >= 20 with npm is needed" >&2; exit 1; }
    # The hostd that `cargo test --workspace` builds (same features: no second build in CI).
    cd {{root}}/hostd && cargo test --locked --workspace --no-run --quiet
    export THROTTLESCOPE_HOSTD={{root}}/hostd/target/debug/hostd THROTTLESCOPE_REQUIRE_QUERIES=1
    cd {{root}}/dashboards/check
    npm ci --no-audit --no-fund --loglevel=error
    node --test test/

# Start an installed Grafana with the throttlescope datasource and dashboards provisioned
# (needs INFLUX_TOKEN; INFLUX_URL defaults to http://127.0.0.1:8086). Not run in CI.
grafana-up:
    #!/usr/bin/env bash
    set -euo pipefail
    bin=$(command -v grafana || command -v grafana-server || true)
    [[ -n "$bin" ]] || { echo "grafana-up: Grafana is not installed (docs/dashboards.md)" >&2; exit 1; }
    : "${INFLUX_TOKEN:?grafana-up: set INFLUX_TOKEN to a token that can read the throttlescope bucket}"
    home="${GRAFANA_HOME:-}"
    for h in /usr/share/grafana "$(brew --prefix 2>/dev/null || true)/opt/grafana/share/grafana"; do
        [[ -z "$home" && -d "$h/conf" ]] && home="$h"
    done
    [[ -n "$home" ]] || { echo "grafana-up: set GRAFANA_HOME to Grafana's install directory" >&2; exit 1; }
    data="${THROTTLESCOPE_CACHE:-$HOME/.cache/throttlescope}/grafana"
    mkdir -p "$data"
    export INFLUX_URL="${INFLUX_URL:-http://127.0.0.1:8086}"
    export THROTTLESCOPE_DASHBOARDS="{{root}}/dashboards"
    export GF_PATHS_PROVISIONING="{{root}}/dashboards/provisioning"
    export GF_PATHS_DATA="$data"
    export GF_SERVER_HTTP_ADDR="${GF_SERVER_HTTP_ADDR:-127.0.0.1}"
    export GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH="{{root}}/dashboards/run.json"
    echo "grafana-up: http://${GF_SERVER_HTTP_ADDR}:${GF_SERVER_HTTP_PORT:-3000} (InfluxDB ${INFLUX_URL})" >&2
    if [[ "$(basename "$bin")" == grafana ]]; then exec "$bin" server --homepath "$home"; else exec "$bin" --homepath "$home"; fi

# Issue 33's real-device matrix (also part of `just test`): `hostd run` on ext4 on a loop
# device in /dev/shm that the kernel's blkio controller slows at byte marks, over the profiles'
# file-size mixes × burst files × drop size × position × recovery, plus steady cells. Fails on
# any failing cell (STRICT: also those listed as failing before issue 33's detection); the
# table is kept in hostd/target/tmp/real-matrix.md. CELLS: comma-separated parts of cell names.
# The real-device matrix (about 5 min, root): prints its table (cells, found, onset error, false events).
test-matrix cells="":
    cd {{root}}/hostd && THROTTLESCOPE_REQUIRE_REAL_DEVICE=1 THROTTLESCOPE_MATRIX_STRICT=1 THROTTLESCOPE_MATRIX_CELLS="{{cells}}" cargo test --locked -p hostd --test real_matrix

# The fill-states sweep on a real device with the profile's own 256 MiB files at QD32 (about 5 minutes, 14 GiB on /var/tmp).
test-fill-states-profile-sizes:
    cd {{root}}/hostd && THROTTLESCOPE_REQUIRE_REAL_DEVICE=1 cargo test --locked -p hostd --test fill_states_realdev -- --ignored --nocapture

# DIR: the scratch directory a previous `test-matrix` kept (THROTTLESCOPE_REALDEV_KEEP=1, or
# on a failure); its runs are analysed by this build's `hostd analyze`, no devices.
# The matrix's table for kept runs: before and after an analysis change on the same recorded runs.
test-matrix-replay dir cells="":
    cd {{root}}/hostd && THROTTLESCOPE_MATRIX_REPLAY="$(realpath '{{dir}}')" THROTTLESCOPE_MATRIX_STRICT=1 THROTTLESCOPE_MATRIX_CELLS="{{cells}}" cargo test --locked -p hostd --test real_matrix

# Analysis report and comparison page (`hostd compare --report`, with --json and --charts) in headless Chromium: no console messages, all charts in the DOM, no overlapping labels, screenshots.
test-report:
    cd {{root}}/hostd && cargo test --locked --workspace --test chromium -- --ignored --nocapture

# `hostd analyze` on a synthetic 100 GB run (800 files, 1 000 000 probe samples), release build; target < 1 s.
bench-analysis:
    #!/usr/bin/env bash
    set -euo pipefail
    cd {{root}}/hostd && cargo build --locked --release -p hostd -p hostd-scenario
    work=$(mktemp -d -t throttlescope-bench-analysis.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    {{root}}/hostd/target/release/scenario-gen --bench "$work/run"
    echo "files.csv: $(( $(wc -l < "$work/run/files.csv") - 1 )) files; probe.csv: $(( $(wc -l < "$work/run/probe.csv") - 1 )) samples, $(du -m "$work/run/probe.csv" | cut -f1) MB; counters.csv: $(( $(wc -l < "$work/run/counters.csv") - 1 )) 100 ms samples"
    for what in "--no-report" ""; do
        times=()
        for i in 1 2 3 4 5; do
            t0=$(date +%s%N)
            {{hostd}} analyze "$work/run" $what >/dev/null
            times+=($(( ($(date +%s%N) - t0) / 1000000 )))
        done
        sorted=$(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')
        echo "bench-analysis: hostd analyze ${what:-(with report.html)}: runs ${sorted}ms; median $(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p) ms (target < 1000 ms)"
    done

# `hostd run` of MINUTES (10) of 8-32 MB files (write, read back, delete) on ext4 on a loop device over /var/tmp, with the simulated probe at 1 kHz and then without: the resident set every 10 s, its slope after the first minute (target < 1 KB/s), bytes per file and the run directory's bytes. Needs root.
bench-long-run minutes="10": firmware-build
    cd {{root}}/hostd && cargo build --locked --release -p hostd
    {{root}}/scripts/bench-long-run.sh {{hostd}} {{minutes}}
# The comparison page of ten synthetic 100-GB runs, release build: its size (target < 1 MB) and its render time in headless Chromium (target < 2 s).
bench-report:
    cd {{root}}/hostd && cargo build --locked --release -p hostd -p hostd-scenario
    {{root}}/scripts/bench-report.sh {{hostd}} {{root}}/hostd/target/release/scenario-gen

# The synthetic 24-hour run (100 000 files, 86.4 M probe samples at 1 kHz in probe/ Parquet
# segments with their summary levels), built under /var/tmp and removed after, release build:
# `hostd analyze` wall time and peak RSS, report.html size. Targets: < 2 min, < 1 GB, < 5 MB.
bench-long-synthetic:
    #!/usr/bin/env bash
    set -euo pipefail
    cd {{root}}/hostd && cargo build --locked --release -p hostd -p hostd-scenario
    work=$(mktemp -d /var/tmp/throttlescope-bench-long.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    t0=$(date +%s%N)
    {{root}}/hostd/target/release/scenario-gen --long-24h "$work/run"
    samples=$(du -sb "$work/run/probe" | cut -f1)
    echo "generated in $(( ($(date +%s%N) - t0) / 1000000 )) ms; probe/: $(( samples / 1000000 )) MB; files.csv: $(( $(wc -l < "$work/run/files.csv") - 1 )) files"
    /usr/bin/time -v {{hostd}} analyze "$work/run" > "$work/analyze.out" 2> "$work/time.txt" || { cat "$work/time.txt"; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
    report=$(stat -c %s "$work/run/report.html")
    echo "bench-long-synthetic: hostd analyze: wall ${wall} (target < 2:00), peak RSS $(( rss_kb / 1024 )) MB (target < 1024 MB), report.html $(( report / 1024 )) KB (target < 5120 KB)"

# Long runs (#24): the real 10-minute run's resident set and run directory, then the synthetic 24-hour run's analysis.
bench-long: bench-long-run bench-long-synthetic

# All benchmarks.
bench: bench-firmware bench-analysis bench-report bench-probe bench-io

# Build influxd 2.7 from its Go module into ~/.cache/throttlescope/influxd (reused when built).
influx-build:
    @{{root}}/scripts/build-influxd.sh >/dev/null

# Start a local influxd on 127.0.0.1:8086 (data under the cache) and onboard it.
influx-up: influx-build
    {{root}}/scripts/influxd-dev.sh start
    cd {{root}}/hostd && cargo run --locked --quiet --release -p hostd -- influx setup --influx-url "http://127.0.0.1:${INFLUXD_PORT:-8086}"

# Stop the local influxd that influx-up started.
influx-down:
    {{root}}/scripts/influxd-dev.sh stop

# InfluxDB writer only: line protocol, gzip, retry, spool and the 30 s outage, on a real influxd.
test-influx: influx-build
    cd {{root}}/hostd && cargo test --locked -p hostd-influx

# InfluxDB write throughput (points/s, batches of 5 000, gzip) against a private local influxd,
# side by side with the official Python influxdb-client (installed into a venv under ~/.cache).
bench-influx points="1000000" rounds="3": influx-build
    #!/usr/bin/env bash
    set -euo pipefail
    venv="$HOME/.cache/throttlescope/bench-venv"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -c 'import influxdb_client' 2>/dev/null || "$venv/bin/pip" install --quiet 'influxdb-client==1.50.0'
    cd {{root}}/hostd
    BENCH_INFLUX_PYTHON="$venv/bin/python" cargo run --locked --quiet --release -p hostd-influx --features testing --example bench-influx -- {{points}} {{rounds}}

# Host probe decode + clock alignment throughput in samples/s on one core (target >= 200 000), after the InfluxDB write throughput.
bench-probe: bench-influx
    cd {{root}}/hostd && cargo run --locked --quiet --release -p hostd-probe --example bench_decode

# Fuzz the probe frame + message decoder for SECONDS (needs the nightly toolchain; installs cargo-fuzz). Not part of `just test`.
fuzz seconds="60":
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
    corpus={{root}}/hostd/fuzz/corpus/frame_decoder
    mkdir -p "$corpus"
    cp {{root}}/fixtures/protocol/*.bin "$corpus"/   # seeded from the shared protocol vectors
    cd {{root}}/hostd && cargo +nightly fuzz run --fuzz-dir fuzz frame_decoder "$corpus" -- -max_total_time={{seconds}}
